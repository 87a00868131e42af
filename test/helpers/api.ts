import { createHash } from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import type { Express } from 'express';
import { createApp, type RinglaneApp } from '../../src/app.js';
import { config } from '../../src/config.js';
import { waitForRedis } from '../../src/lib/redis.js';
import { redisForTests } from './redis.js';

/** A fresh app instance: its own credential cache, as a separate API process would have. */
export async function newApp(options: { operatorToken?: string | null } = {}): Promise<RinglaneApp> {
  const redis = redisForTests();
  await waitForRedis(redis, 5000);
  return createApp({ redis, ...options });
}

let shared: RinglaneApp | null = null;

/** The app most tests share. */
export async function app(): Promise<Express> {
  shared ??= await newApp();
  return shared.app;
}

export const operator = () => `Bearer ${config.operatorToken}`;

export interface TestOrg {
  id: string;
  key: string;
  keyId: string;
  memberId: string;
  body: any;
}

/** Creates an organization through the operator's admin API; returns its owner key. */
export async function createOrg(fields: Record<string, unknown> = {}): Promise<TestOrg> {
  const res = await request(await app())
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
  return request(await app()).post('/v1/sessions').send(body);
}

export const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * Two app instances with separate in-process credential caches, as two API processes would
 * have, created before and closed after the enclosing `describe` block.
 */
export function twoApiProcesses(): { a: RinglaneApp; b: RinglaneApp } {
  const processes = {} as { a: RinglaneApp; b: RinglaneApp };
  before(async () => {
    processes.a = await newApp();
    processes.b = await newApp();
  });
  after(async () => {
    await processes.a.close();
    await processes.b.close();
  });
  return processes;
}
