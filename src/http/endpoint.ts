import { Router, type Request, type RequestHandler, type Response } from 'express';
import Joi from 'joi';
import { actorOf, isActingInTenant, type Actor } from '../auth/actor.js';
import type { Capability } from '../auth/capabilities.js';
import { ForbiddenError, MissingCapabilityError } from '../lib/errors.js';
import { validate } from './validate.js';

export interface Context<B, Q, P> {
  actor: Actor;
  body: B;
  query: Q;
  params: P;
  req: Request;
  res: Response;
}

interface Common<B, Q, P> {
  /** `forbidden`: the area is closed inside a tenant (SPEC.md §4.1 rule 2). Default `allowed`. */
  tenant?: 'allowed' | 'forbidden';
  /** A check on the caller that comes before the capability (e.g. reseller access). */
  guard?: (actor: Actor) => void;
  query?: Joi.Schema;
  params?: Joi.Schema;
  /** Success status; a handler returning `undefined` answers 204. */
  status?: number;
  handler: (ctx: Context<B, Q, P>) => Promise<unknown>;
}

/** Reads need no capability (SPEC.md §5 rule 3). */
export type ReadEndpoint<Q, P> = Common<never, Q, P>;

/** Every write declares the capability it needs, and its body schema. */
export interface WriteEndpoint<B, Q, P> extends Common<B, Q, P> {
  capability: Capability;
  body?: Joi.Schema;
}

const EMPTY = Joi.object({});

const closedToTenants = () =>
  new ForbiddenError('not_available_for_tenant', 'This area is not available inside a tenant.');

/**
 * Declarative `/v1` routes: each endpoint states its capability, tenant rule and schemas,
 * and the checks run here, the same way for every route, before its handler.
 */
export class ApiRouter {
  readonly router = Router();

  constructor(private readonly idempotency: RequestHandler) {}

  get<Q = unknown, P = Record<string, string>>(path: string, spec: ReadEndpoint<Q, P>): this {
    return this.add('get', path, spec);
  }

  post<B, Q = unknown, P = Record<string, string>>(path: string, spec: WriteEndpoint<B, Q, P>): this {
    return this.add('post', path, spec);
  }

  put<B, Q = unknown, P = Record<string, string>>(path: string, spec: WriteEndpoint<B, Q, P>): this {
    return this.add('put', path, spec);
  }

  patch<B, Q = unknown, P = Record<string, string>>(path: string, spec: WriteEndpoint<B, Q, P>): this {
    return this.add('patch', path, spec);
  }

  delete<Q = unknown, P = Record<string, string>>(path: string, spec: WriteEndpoint<never, Q, P>): this {
    return this.add('delete', path, spec);
  }

  private add<B, Q, P>(method: 'get' | 'post' | 'put' | 'patch' | 'delete', path: string, spec: Common<B, Q, P> & Partial<WriteEndpoint<B, Q, P>>): this {
    const authorize: RequestHandler = (_req, res, next) => {
      const actor = actorOf(res);
      const inTenant = isActingInTenant(actor);
      if (inTenant && spec.tenant === 'forbidden') throw closedToTenants();
      spec.guard?.(actor);
      if (spec.capability) {
        if (!actor.capabilities.includes(spec.capability)) throw new MissingCapabilityError(spec.capability);
        if (inTenant && actor.org.disabled) {
          throw new ForbiddenError('tenant_disabled', 'This tenant is disabled: it can be read but not changed.');
        }
      }
      next();
    };
    const run: RequestHandler = async (req, res) => {
      const ctx: Context<B, Q, P> = {
        actor: actorOf(res),
        body: spec.body ? validate<B>(spec.body, req.body, 'body') : (undefined as B),
        query: validate<Q>(spec.query ?? EMPTY, req.query, 'query'),
        params: spec.params ? validate<P>(spec.params, req.params, 'params') : (req.params as P),
        req,
        res,
      };
      const result = await spec.handler(ctx);
      if (result === undefined) res.status(204).end();
      else res.status(spec.status ?? (method === 'post' ? 201 : 200)).json(result);
    };
    const chain = method === 'post' ? [authorize, this.idempotency, run] : [authorize, run];
    this.router[method](path, ...chain);
    return this;
  }
}
