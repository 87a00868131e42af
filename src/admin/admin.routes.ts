import { Router, type RequestHandler } from 'express';
import type { Capability } from '../auth/capabilities.js';
import type { SimulateScript } from '../calls/call.entity.js';
import { inboundCallSchema } from '../calls/calls.schemas.js';
import type { CallsService } from '../calls/calls.service.js';
import { validate } from '../http/validate.js';
import type { Micros } from '../lib/money.js';
import {
  balanceAdjustmentSchema,
  createMemberSchema,
  createOrgSchema,
  orgIdParams,
  updateOrgSchema,
} from '../orgs/orgs.schemas.js';
import type { CreateOrgInput, OrgsService, UpdateOrgInput } from '../orgs/orgs.service.js';

type InboundCall = { to: string; from: string; simulate: SimulateScript };

/** The operator's admin API (CONTRACT.md §3), mounted at `/admin/v1` behind the operator token. */
export function adminRoutes(orgs: OrgsService, calls: CallsService, idempotency: RequestHandler): Router {
  const router = Router();
  const orgId = (params: unknown) => validate<{ id: string }>(orgIdParams, params, 'params').id;

  router.post('/orgs', idempotency, async (req, res) => {
    res.status(201).json(await orgs.createOrg(validate<CreateOrgInput>(createOrgSchema, req.body, 'body')));
  });
  router.get('/orgs/:id', async (req, res) => {
    res.json(await orgs.getOrg(orgId(req.params)));
  });
  router.patch('/orgs/:id', async (req, res) => {
    res.json(await orgs.updateOrg(orgId(req.params), validate<UpdateOrgInput>(updateOrgSchema, req.body, 'body')));
  });
  router.post('/orgs/:id/balance', idempotency, async (req, res) => {
    const { amount } = validate<{ amount: Micros }>(balanceAdjustmentSchema, req.body, 'body');
    res.json(await orgs.adjustBalance(orgId(req.params), amount));
  });
  router.post('/orgs/:id/members', idempotency, async (req, res) => {
    const body = validate<{ email: string; capabilities: Capability[]; password?: string }>(createMemberSchema, req.body, 'body');
    res.status(201).json(await orgs.addMember(orgId(req.params), body));
  });
  // The simulated carrier's inbound call: someone dials one of an organization's numbers.
  router.post('/simulator/inbound-calls', idempotency, async (req, res) => {
    res.status(201).json(await calls.receiveInbound(validate<InboundCall>(inboundCallSchema, req.body, 'body')));
  });
  return router;
}
