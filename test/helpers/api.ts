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
