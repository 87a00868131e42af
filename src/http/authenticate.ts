import type { RequestHandler } from 'express';
import type { Actor } from '../auth/actor.js';
import type { CredentialStore } from '../auth/credential-store.js';
import { API_KEY_PREFIX, SESSION_TOKEN_PREFIX } from '../auth/tokens.js';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../lib/errors.js';

const BEARER = /^Bearer ([\x21-\x7e]+)$/i;

/**
 * Resolves `Authorization: Bearer <API key | session token>` and `X-Tenant-Id` into `res.locals.actor`:
 * the one owner of who may act where, for every `/v1` route that takes a credential.
 */
export function authenticate(store: CredentialStore): RequestHandler {
  return async (req, res, next) => {
    const token = BEARER.exec(req.get('authorization') ?? '')?.[1];
    let actor: Actor | null = null;
    /** The tenants a restricted key may act in (CONTRACT.md §5); null: no restriction. */
    let onlyTenants: ReadonlySet<string> | null = null;
    /** The auth epoch the key's lookup read: the tenant's lookup is of the same. */
    let epoch: string | null = null;
    if (token?.startsWith(API_KEY_PREFIX)) {
      const found = await store.findApiKey(token);
      if (found) {
        const { key } = found;
        epoch = found.epoch;
        actor = {
          via: 'api_key',
          keyId: key.keyId,
          credentialId: key.keyId,
          memberId: key.memberId,
          capabilities: key.permissions,
          ownerOrg: key.org,
          org: key.org,
        };
        onlyTenants = key.tenantIds;
      }
    } else if (token?.startsWith(SESSION_TOKEN_PREFIX)) {
      const session = await store.findSession(token);
      if (session) {
        actor = {
          via: 'session',
          keyId: null,
          credentialId: session.sessionId,
          memberId: session.memberId,
          capabilities: session.capabilities,
          ownerOrg: session.org,
          org: session.org,
        };
      }
    }
    if (!actor) throw new UnauthorizedError();

    const tenantId = req.get('x-tenant-id');
    // Decided from the cached key alone, before any lookup: the same answer for the account itself,
    // another of its tenants, another account's and an id that never existed.
    if (onlyTenants && (tenantId === undefined || !onlyTenants.has(tenantId))) {
      throw new ForbiddenError('tenant_not_allowed_for_key', 'This API key works only inside the tenants it was made for: send X-Tenant-Id with one of them.');
    }
    if (tenantId !== undefined) {
      if (actor.via !== 'api_key') {
        throw new ForbiddenError('tenant_header_requires_api_key', 'X-Tenant-Id works with API keys only, not with a session.');
      }
      const tenant = await store.findTenant(actor.ownerOrg.id, tenantId, epoch);
      if (!tenant) throw new NotFoundError('tenant', 'No tenant with this id belongs to your account.');
      // Reseller access is the operator's to take away, and with it the account's own tenants.
      // (Any other id stays 404: SPEC.md §4.1 rule 1.)
      if (!actor.ownerOrg.isReseller) throw new ForbiddenError('not_a_reseller', 'Reseller access is not enabled on this account.');
      actor.org = tenant;
    }
    res.locals.actor = actor;
    next();
  };
}
