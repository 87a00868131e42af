import { Router } from 'express';
import type { Capability } from '../auth/capabilities.js';
import type { SimulateScript } from '../calls/call.entity.js';
import { inboundCallSchema } from '../calls/calls.schemas.js';
import type { CallsService } from '../calls/calls.service.js';
import type { RouteDoc } from '../http/route-doc.js';
import { validate } from '../http/validate.js';
import { sendOutcome, type IdempotentRequests } from '../idempotency/idempotent.js';
import type { Micros } from '../lib/money.js';
import { balanceAdjustmentSchema, createMemberSchema, createOrgSchema, orgIdParams, updateOrgSchema } from '../orgs/orgs.schemas.js';
import type { CreateOrgInput, OrgsService, UpdateOrgInput } from '../orgs/orgs.service.js';

type InboundCall = { to: string; from: string; simulate: SimulateScript };

interface AdminRoute<B> extends Pick<RouteDoc, 'method' | 'path' | 'summary' | 'params' | 'body'> {
  status?: number;
  handler: (input: { id: string; body: B }) => Promise<unknown>;
}

const successOf = (spec: Pick<AdminRoute<unknown>, 'method' | 'status'>) => spec.status ?? (spec.method === 'post' ? 201 : 200);

/** The operator's idempotency records: one scope and one credential, the operator token. */
const OPERATOR = { scope: 'operator', credential: 'operator' };

/** The operator's admin API (CONTRACT.md §3) at `/admin/v1`; route paths are relative to the mount point. */
export function adminRoutes(orgs: OrgsService, calls: CallsService, idempotent: IdempotentRequests): { router: Router; routes: RouteDoc[] } {
  const route = <B>(spec: AdminRoute<B>) => spec;
  const routes = [
    route<CreateOrgInput>({
      method: 'post',
      path: '/orgs',
      summary: 'Create an organization with its owner and first API key',
      body: createOrgSchema,
      handler: ({ body }) => orgs.createOrg(body),
    }),
    route({ method: 'get', path: '/orgs/:id', summary: 'Read an organization', params: orgIdParams, handler: ({ id }) => orgs.getOrg(id) }),
    route<UpdateOrgInput>({
      method: 'patch',
      path: '/orgs/:id',
      summary: 'Change an organization',
      params: orgIdParams,
      body: updateOrgSchema,
      handler: ({ id, body }) => orgs.updateOrg(id, body),
    }),
    route<{ amount: Micros }>({
      method: 'post',
      path: '/orgs/:id/balance',
      summary: "Adjust an organization's balance",
      params: orgIdParams,
      body: balanceAdjustmentSchema,
      status: 200,
      handler: ({ id, body }) => orgs.adjustBalance(id, body.amount),
    }),
    route<{ email: string; capabilities: Capability[]; password?: string }>({
      method: 'post',
      path: '/orgs/:id/members',
      summary: 'Add a member with an API key',
      params: orgIdParams,
      body: createMemberSchema,
      handler: ({ id, body }) => orgs.addMember(id, body),
    }),
    route<InboundCall>({
      method: 'post',
      path: '/simulator/inbound-calls',
      summary: 'Simulate an inbound call',
      body: inboundCallSchema,
      handler: ({ body }) => calls.receiveInbound(body),
    }),
  ] as AdminRoute<unknown>[];

  const router = Router();
  for (const spec of routes) {
    router[spec.method](spec.path, async (req, res) => {
      const id = spec.params ? validate<{ id: string }>(spec.params, req.params, 'params').id : '';
      const body = spec.body ? validate(spec.body, req.body, 'body') : undefined;
      const work = async () => ({ status: successOf(spec), body: await spec.handler({ id, body }) });
      if (spec.method === 'post') await idempotent.respond(req, res, OPERATOR, work);
      else sendOutcome(res, await work());
    });
  }
  return {
    router,
    routes: routes.map(({ method, path, summary, params, body, ...spec }) => ({
      method,
      path,
      summary,
      params,
      body,
      status: successOf({ method, ...spec }),
      caller: 'operator',
    })),
  };
}
