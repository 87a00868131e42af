import type { Response } from 'express';
import type { Capability } from './capabilities.js';

/** The fields of an organization that authorization decisions need. */
export interface OrgRef {
  id: string;
  parentId: string | null;
  isReseller: boolean;
  disabled: boolean;
}

/** Who is calling, and on behalf of which organization. */
export interface Actor {
  via: 'api_key' | 'session';
  keyId: string | null;
  /** The credential itself: the API key's id or the session's id. Idempotency records belong to it. */
  credentialId: string;
  memberId: string;
  capabilities: Capability[];
  ownerOrg: OrgRef;
  /** The organization the request acts on: the tenant named by `X-Tenant-Id`, else `ownerOrg`. */
  org: OrgRef;
}

export const isActingInTenant = (actor: Actor): boolean => actor.org.id !== actor.ownerOrg.id;

/** The authenticated actor of a request (set by the authenticate middleware). */
export function actorOf(res: Response): Actor {
  const actor = res.locals.actor as Actor | undefined;
  if (!actor) throw new Error('actorOf() called on a route without authentication');
  return actor;
}
