import { expect } from 'chai';
import type request from 'supertest';
import { asCaller, createOrg, uniqueEmail, type Caller, type TestOrg } from './api.js';

export interface Reseller extends TestOrg {
  as: Caller;
  /** The reseller's key acting inside `tenantId` (X-Tenant-Id). */
  inside(tenantId: string): Caller;
}

/** A reseller account with money and rates, made by the operator. */
export async function reseller(fields: Record<string, unknown> = {}): Promise<Reseller> {
  const org = await createOrg({ reseller: true, balance: '100.00', rates: { per_minute: '0.600000', per_text: '0.050000' }, ...fields });
  return { ...org, as: asCaller(org.key), inside: (tenantId) => asCaller(org.key, { 'X-Tenant-Id': tenantId }) };
}

/** POST /v1/tenants; expects 201 and returns the tenant. */
export async function createTenant(owner: Reseller, fields: Record<string, unknown> = {}) {
  const res = await owner.as.post('/v1/tenants', { name: 'Bright Smiles', timezone: 'America/New_York', industry: 'dental', ...fields });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body;
}

/**
 * Requests into the areas CONTRACT.md closes inside a tenant that need no id (balance,
 * payments, receipts, plans, add-ons, referrals, invites, API keys): each answers for an
 * ordinary organization and 403 `not_available_for_tenant` inside a tenant.
 */
export const CLOSED_AREA_REQUESTS: Array<[string, (caller: Caller) => Promise<request.Response>]> = [
  ['GET /v1/balance', (c) => c.get('/v1/balance')],
  ['GET /v1/payments', (c) => c.get('/v1/payments')],
  ['GET /v1/receipts', (c) => c.get('/v1/receipts')],
  ['GET /v1/plans', (c) => c.get('/v1/plans')],
  ['GET /v1/add-ons', (c) => c.get('/v1/add-ons')],
  ['GET /v1/referrals', (c) => c.get('/v1/referrals')],
  ['GET /v1/invites', (c) => c.get('/v1/invites')],
  ['POST /v1/invites', (c) => c.post('/v1/invites', { email: uniqueEmail('invitee'), capabilities: ['operate'] })],
  ['GET /v1/api-keys', (c) => c.get('/v1/api-keys')],
  ['POST /v1/api-keys', (c) => c.post('/v1/api-keys', { label: 'inside', permissions: ['operate'] })],
];
