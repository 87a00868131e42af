import { expect } from 'chai';
import { asCaller, createOrg, type Caller, type TestOrg } from './api.js';

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
