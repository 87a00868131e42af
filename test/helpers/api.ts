import { createHash } from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import type { Express } from 'express';
import type { DataSource } from 'typeorm';
import { createApp, type AppDeps, type RinglaneApp } from '../../src/app.js';
import { config } from '../../src/config.js';
import { db } from './db.js';
import { openApiDocument } from '../../src/http/openapi.js';
import { waitForRedis, type RedisClient } from '../../src/lib/redis.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { checkResponses } from './openapi-check.js';
import { redisForTests } from './redis.js';

/**
 * A fresh app instance: its own credential cache, as a separate API process would have. Every
 * response it gives on a `/v1` route is checked against the OpenAPI document (see root-hooks.ts).
 */
export async function newApp(options: AppOptions = {}): Promise<RinglaneApp> {
  if (!options.redis) await waitForRedis(redisForTests(), 5000);
  return appOver(options);
}

/** App options in tests: those of `createApp`, and the database, Redis and clock its runtime uses (default: the run's, the real one). */
export type AppOptions = Omit<AppDeps, 'runtime' | 'inspect'> & { db?: DataSource; redis?: RedisClient; now?: () => Date };

/**
 * An app over a runtime of its own (see `createRuntime`), as a web process has; `close()`
 * closes both. Every `/v1` response it gives is checked against the OpenAPI document.
 */
export function appOver({ db: database = db, redis = redisForTests(), now, ...options }: AppOptions = {}): RinglaneApp & { runtime: Runtime } {
  const runtime = createRuntime({ db: database, redis, now });
  const ringlane: RinglaneApp = createApp({ runtime, ...options, inspect: checkResponses(() => openApiDocument(ringlane.routes)) });
  return {
    ...ringlane,
    runtime,
    close: async () => {
      await ringlane.close();
      await runtime.close();
    },
  };
}

let shared: RinglaneApp | null = null;

/** The app instance most tests share, with its credential store. */
export async function sharedApp(): Promise<RinglaneApp> {
  shared ??= await newApp();
  return shared;
}

/** The app most tests share. */
export async function app(): Promise<Express> {
  return (await sharedApp()).app;
}

export const operator = () => `Bearer ${config.operatorToken}`;

/** The operator's `PATCH /admin/v1/orgs/{id}` (reseller access, thresholds, ceilings); answers 200 or the test fails. */
export async function operatorPatchOrg(orgId: string, body: Record<string, unknown>): Promise<request.Response> {
  return expectStatus(
    await request(await app())
      .patch(`/admin/v1/orgs/${orgId}`)
      .set('Authorization', operator())
      .send(body),
    200,
  );
}

export interface TestOrg {
  id: string;
  key: string;
  keyId: string;
  memberId: string;
  body: any;
}

/** Creates an organization through the operator's admin API (of the shared app, or of a real web process at `baseUrl`); returns its owner key. */
export async function createOrg(fields: Record<string, unknown> = {}, baseUrl?: string): Promise<TestOrg> {
  const res = await request(baseUrl ?? (await app()))
    .post('/admin/v1/orgs')
    .set('Authorization', operator())
    .send({ name: 'Test Org', ...fields })
    .expect(201);
  return { id: res.body.org.id, key: res.body.api_key.key, keyId: res.body.api_key.key_id, memberId: res.body.member.id, body: res.body };
}

/** Adds a member through the admin API; returns the member's key. */
export async function addMember(orgId: string, fields: { email: string; capabilities: string[]; password?: string }) {
  const res = await request(await app())
    .post(`/admin/v1/orgs/${orgId}/members`)
    .set('Authorization', operator())
    .send(fields)
    .expect(201);
  return { memberId: res.body.member.id as string, key: res.body.api_key.key as string, body: res.body };
}

export const bearer = (token: string) => `Bearer ${token}`;

let counter = 0;
/** A unique email for this run. */
export const uniqueEmail = (name = 'member') => `${name}.${process.pid}.${Date.now()}.${counter++}@example.com`;

/** Asserts the status (showing the body when it differs); returns the response. */
export function expectStatus(res: request.Response, status: number): request.Response {
  expect(res.status, res.text).to.equal(status);
  return res;
}

/** Asserts a CONTRACT.md §2 error: the status and `{error: {code, message, ...}}`; returns `error`. */
export function expectError(res: request.Response, status: number, code: string): Record<string, any> {
  expectStatus(res, status);
  expect(res.headers['content-type']).to.match(/^application\/json/);
  expect(res.body).to.have.property('error').that.is.an('object');
  expect(res.body.error.code).to.equal(code);
  expect(res.body.error.message).to.be.a('string').that.is.not.empty;
  return res.body.error;
}

/** Asserts 429 `rate_limited` with a Retry-After in whole seconds, at most `windowSeconds`. */
export function expectRateLimited(res: request.Response, windowSeconds: number): Record<string, any> {
  const error = expectError(res, 429, 'rate_limited');
  const retryAfter = res.headers['retry-after'];
  expect(retryAfter, 'Retry-After header').to.match(/^\d+$/);
  expect(Number(retryAfter)).to.be.above(0).and.at.most(windowSeconds);
  return error;
}

/** `POST /v1/api-keys` as `token` (on `target`, else the shared app); the response is not checked. */
export async function postApiKey(token: string, body: Record<string, unknown>, target?: Express, headers: Record<string, string> = {}) {
  return request(target ?? (await app()))
    .post('/v1/api-keys')
    .set('Authorization', bearer(token))
    .set(headers)
    .send(body);
}

/** `GET /v1/api-keys` as `token`, with an optional query string such as `limit=2`. */
export async function listApiKeys(token: string, query = '', target?: Express) {
  return request(target ?? (await app()))
    .get(`/v1/api-keys${query ? `?${query}` : ''}`)
    .set('Authorization', bearer(token));
}

/** `POST /v1/sessions`; the response is not checked. */
export async function signIn(body: Record<string, unknown>) {
  return request(await app())
    .post('/v1/sessions')
    .send(body);
}

export const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * Two app instances with separate in-process credential caches, as two API processes would
 * have, created before and closed after the enclosing `describe` block.
 */
export function twoApiProcesses(options: AppOptions = {}): { a: RinglaneApp; b: RinglaneApp } {
  const processes = {} as { a: RinglaneApp; b: RinglaneApp };
  before(async () => {
    processes.a = await newApp(options);
    processes.b = await newApp(options);
  });
  after(async () => {
    await processes.a.close();
    await processes.b.close();
  });
  return processes;
}

/**
 * Requests as `token` (an API key or a session token), with optional extra headers, to the
 * shared app or to a real web process at `baseUrl`.
 */
export function asCaller(token: string, headers: Record<string, string> = {}, baseUrl?: string) {
  const send = async (method: 'get' | 'post' | 'put' | 'patch' | 'delete', path: string, body?: unknown) => {
    const req = request(baseUrl ?? (await app()))
      [method](path)
      .set('Authorization', bearer(token))
      .set(headers);
    return body === undefined ? req : req.send(body as object);
  };
  return {
    get: (path: string) => send('get', path),
    post: (path: string, body: unknown) => send('post', path, body),
    put: (path: string, body: unknown) => send('put', path, body),
    patch: (path: string, body: unknown) => send('patch', path, body),
    delete: (path: string) => send('delete', path),
  };
}

export type Caller = ReturnType<typeof asCaller>;

/** A key of a new member of `org` holding only `capabilities`. */
export async function keyWith(org: TestOrg, capabilities: string[]): Promise<string> {
  return (await addMember(org.id, { email: uniqueEmail('limited'), capabilities })).key;
}

/**
 * A tenant of `reseller`, written straight to the database (the tenant endpoints are not
 * under test here); the reseller's key acts inside it with `X-Tenant-Id`.
 */
export async function insertTenant(reseller: TestOrg, name = 'A tenant'): Promise<string> {
  const id = `org_tenant${process.pid}${counter++}`;
  await db.query('UPDATE organizations SET is_reseller = true WHERE id = $1', [reseller.id]);
  await db.query('INSERT INTO organizations (id, name, parent_id) VALUES ($1, $2, $3)', [id, name, reseller.id]);
  return id;
}

/** Every item of a list endpoint, walking its pages `limit` at a time; also the pages. */
export async function walkList(caller: Caller, path: string, limit: number): Promise<{ pages: any[]; items: any[] }> {
  const pages: any[] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const page: any = expectStatus(await caller.get(`${path}${separator}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`), 200).body;
    expect(page).to.have.all.keys('data', 'next_cursor');
    pages.push(page);
    cursor = page.next_cursor;
    expect(pages.length, 'pagination does not end').to.be.below(50);
  } while (cursor !== null);
  return { pages, items: pages.flatMap((p) => p.data) };
}
