import { Router, type Request, type RequestHandler, type Response } from 'express';
import Joi from 'joi';
import { actorOf, isActingInTenant, type Actor } from '../auth/actor.js';
import type { Capability } from '../auth/capabilities.js';
import { sendOutcome, type IdempotentRequests } from '../idempotency/idempotent.js';
import { CsvFile } from '../lib/csv.js';
import { ForbiddenError, MissingCapabilityError } from '../lib/errors.js';
import { sendCsv } from './csv-response.js';
import type { RouteDoc, RouteErrors } from './route-doc.js';
import { validate } from './validate.js';

export interface Context<B, Q, P> {
  actor: Actor;
  body: B;
  query: Q;
  params: P;
  /** The answer's format: `csv` when the route offers it and the request's `Accept` prefers `text/csv`. */
  format: 'json' | 'csv';
  req: Request;
  res: Response;
}

interface Common<B, Q, P> {
  summary: string;
  /** `forbidden`: the area is closed inside a tenant (SPEC.md §4.1 rule 2). Default `allowed`. */
  tenant?: 'allowed' | 'forbidden';
  /** A check on the caller that comes before the capability (e.g. reseller access). */
  guard?: (actor: Actor) => void;
  query?: Joi.Schema;
  params?: Joi.Schema;
  status?: number;
  response?: Joi.Schema;
  errors?: RouteErrors;
  handler: (ctx: Context<B, Q, P>) => Promise<unknown>;
}

/** Reads need no capability (SPEC.md §5 rule 3). */
export interface ReadEndpoint<Q, P> extends Common<never, Q, P> {
  /**
   * The route also answers CSV (`Accept: text/csv`; its handler then returns a `CsvFile`, streamed):
   * what the CSV holds, for the docs.
   */
  csv?: string;
}

export interface WriteEndpoint<B, Q, P> extends Common<B, Q, P> {
  capability: Capability;
  body?: Joi.Schema;
}

const EMPTY = Joi.object({});

/** What a route with a CSV answer offers, JSON first (the answer when `Accept` says nothing); an asked-for charset is the one sent. */
const NEGOTIATED = ['application/json', 'text/csv', 'text/csv; charset=utf-8'];

const closedToTenants = () => new ForbiddenError('not_available_for_tenant', 'This area is not available inside a tenant.');

/** A path's first segment (its resource); every route's path starts with a literal one. */
function firstSegment(path: string): string {
  const match = /^\/([^/:*?()]+)(?:\/|$)/.exec(path);
  if (!match) throw new Error(`${path}: an API path starts with a literal segment`);
  return match[1].toLowerCase();
}

/** The first segment of a request's path (relative to the mount, maybe with a query), lower-cased as routes match case-insensitively. */
const requestSegment = (url: string): string => (/^\/([^/?]*)/.exec(url)?.[1] ?? '').toLowerCase();

/** Declarative `/v1` routes: each states its capability, tenant rule and schemas, checked here alike for all. */
export class ApiRouter {
  readonly routes: RouteDoc[] = [];
  /**
   * The routes by first segment, each group a router of its own: a request is matched against its
   * resource's few routes only, not every route registered before them (the order within a group
   * is kept; paths with different first segments never match the same request).
   */
  private readonly groups = new Map<string, Router>();

  /** The routes' handler, mounted where their paths are relative to (`/v1`). */
  readonly router: RequestHandler = (req, res, next) => {
    const group = this.groups.get(requestSegment(req.url));
    if (group) group(req, res, next);
    else next();
  };

  constructor(private readonly idempotent: IdempotentRequests) {}

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

  private add<B, Q, P>(
    method: 'get' | 'post' | 'put' | 'patch' | 'delete',
    path: string,
    spec: Common<B, Q, P> & Partial<WriteEndpoint<B, Q, P>> & Pick<ReadEndpoint<Q, P>, 'csv'>,
  ): this {
    // Path parameters reach SQL: each route must say what they may hold.
    if (path.includes(':') && !spec.params) throw new Error(`${method.toUpperCase()} ${path}: path parameters without a schema`);
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
    const success = spec.status ?? (method === 'post' ? 201 : 200);
    const run: RequestHandler = async (req, res) => {
      if (spec.csv !== undefined) res.vary('Accept');
      // Validated before an Idempotency-Key is claimed: bad input is answered without a record.
      const ctx: Context<B, Q, P> = {
        actor: actorOf(res),
        params: spec.params ? validate<P>(spec.params, req.params, 'params') : (req.params as P),
        query: validate<Q>(spec.query ?? EMPTY, req.query, 'query'),
        body: spec.body ? validate<B>(spec.body, req.body, 'body') : (undefined as B),
        format: spec.csv !== undefined && String(req.accepts(NEGOTIATED)).startsWith('text/csv') ? 'csv' : 'json',
        req,
        res,
      };
      const work = async () => {
        const body = await spec.handler(ctx);
        return body === undefined ? { status: 204, body: null } : { status: success, body };
      };
      if (method !== 'post') {
        const outcome = await work();
        return outcome.body instanceof CsvFile ? sendCsv(res, outcome.body) : sendOutcome(res, outcome);
      }
      await this.idempotent.respond(req, res, { scope: ctx.actor.org.id, credential: ctx.actor.credentialId }, work);
    };
    const segment = firstSegment(path);
    let group = this.groups.get(segment);
    if (!group) {
      group = Router();
      this.groups.set(segment, group);
    }
    group[method](path, authorize, run);
    this.routes.push({
      method,
      path,
      summary: spec.summary,
      params: spec.params,
      query: spec.query ?? EMPTY,
      body: spec.body,
      status: method === 'delete' ? 204 : success,
      response: spec.response,
      capability: spec.capability,
      tenant: spec.tenant ?? 'allowed',
      caller: 'member',
      errors: spec.errors,
      csv: spec.csv,
    });
    return this;
  }
}
