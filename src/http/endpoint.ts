import type { Request, RequestHandler, Response } from 'express';
import Joi from 'joi';
import { match, type MatchFunction } from 'path-to-regexp';
import { actorOf, isActingInTenant, type Actor } from '../auth/actor.js';
import type { Capability } from '../auth/capabilities.js';
import { sendOutcome, type IdempotentRequests } from '../idempotency/idempotent.js';
import { CsvFile } from '../lib/csv.js';
import type { Reads } from '../lib/reads.js';
import { ForbiddenError, MissingCapabilityError } from '../lib/errors.js';
import { routeMatched } from '../lib/telemetry.js';
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

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

interface Route {
  /** Upper case, as `req.method`. */
  method: string;
  /** As the API reference names it, e.g. `/v1/calls/:id` (the name of its requests' spans). */
  name: string;
  /** Express's matching: path-to-regexp, case-insensitive, a trailing slash allowed, parameters percent-decoded. */
  matches: MatchFunction<Record<string, string>>;
  handle: (req: Request, res: Response) => Promise<void>;
}

/** What Express's router answers to `OPTIONS` on a path with routes: the methods, HEAD with GET. */
function answerOptions(res: Response, methods: Set<string>): void {
  if (methods.has('GET')) methods.add('HEAD');
  const allow = [...methods].sort().join(', ');
  res.setHeader('Allow', allow);
  res.type('text/plain').send(allow);
}

/** Declarative `/v1` routes: each states its capability, tenant rule and schemas, checked here alike for all. */
export class ApiRouter {
  readonly routes: RouteDoc[] = [];
  /**
   * The routes by first segment: a request is matched against its resource's few routes only, not
   * every route registered before them (the order within a group is kept; paths with different first
   * segments never match the same request). Matched here, not by a nested Express router per group:
   * that second routing pass (URL parsing, layer stack, parameter processing) cost a fifth of an
   * authenticated read's CPU (docs/operations.md#benchmarks).
   */
  private readonly groups = new Map<string, Route[]>();

  /** The routes' handler, mounted where their paths are relative to (`/v1`). */
  readonly router: RequestHandler = (req, res, next) => {
    const routes = this.groups.get(requestSegment(req.url));
    if (!routes) return next();
    const query = req.url.indexOf('?');
    const path = query === -1 ? req.url : req.url.slice(0, query);
    const options = req.method === 'OPTIONS';
    // HEAD is answered by the GET route, as Express does.
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    let allowed: Set<string> | null = null;
    for (const route of routes) {
      if (!options && route.method !== method) continue;
      const found = route.matches(path);
      if (!found) continue;
      if (options) {
        (allowed ??= new Set()).add(route.method);
        continue;
      }
      req.params = found.params;
      routeMatched(req, route.name);
      route.handle(req, res).catch(next);
      return;
    }
    if (allowed) answerOptions(res, allowed);
    else next();
  };

  constructor(
    private readonly idempotent: IdempotentRequests,
    private readonly reads: Reads,
  ) {}

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

  private add<B, Q, P>(method: Method, path: string, spec: Common<B, Q, P> & Partial<WriteEndpoint<B, Q, P>> & Pick<ReadEndpoint<Q, P>, 'csv'>): this {
    // Path parameters reach SQL: each route must say what they may hold.
    if (path.includes(':') && !spec.params) throw new Error(`${method.toUpperCase()} ${path}: path parameters without a schema`);
    const authorize = (actor: Actor) => {
      const inTenant = isActingInTenant(actor);
      if (inTenant && spec.tenant === 'forbidden') throw closedToTenants();
      spec.guard?.(actor);
      if (spec.capability) {
        if (!actor.capabilities.includes(spec.capability)) throw new MissingCapabilityError(spec.capability);
        if (inTenant && actor.org.disabled) {
          throw new ForbiddenError('tenant_disabled', 'This tenant is disabled: it can be read but not changed.');
        }
      }
    };
    const success = spec.status ?? (method === 'post' ? 201 : 200);
    const handle = async (req: Request, res: Response): Promise<void> => {
      const actor = actorOf(res);
      authorize(actor);
      if (spec.csv !== undefined) res.vary('Accept');
      // Validated before an Idempotency-Key is claimed: bad input is answered without a record.
      const ctx: Context<B, Q, P> = {
        actor,
        params: spec.params ? validate<P>(spec.params, req.params, 'params') : (req.params as P),
        query: validate<Q>(spec.query ?? EMPTY, req.query, 'query'),
        body: spec.body ? validate<B>(spec.body, req.body, 'body') : (undefined as B),
        format: spec.csv !== undefined && String(req.accepts(NEGOTIATED)).startsWith('text/csv') ? 'csv' : 'json',
        req,
        res,
      };
      const work = async () => {
        const body = await spec.handler(ctx);
        // Before the answer: the credential's next read, on any web process, sees this write.
        if (method !== 'get') await this.reads.wrote(actor.credentialId);
        return body === undefined ? { status: 204, body: null } : { status: success, body };
      };
      const answer = async () => {
        const outcome = await work();
        return outcome.body instanceof CsvFile ? sendCsv(res, outcome.body) : sendOutcome(res, outcome);
      };
      // A read's lists, feed, usage and delivery history may come from the standby; a CSV's later pages, pulled by the
      // socket's events, may leave the scope and read the primary, which has at least as much: either is consistent.
      if (method === 'get') return this.reads.scoped(actor.credentialId, answer);
      if (method !== 'post') return answer();
      await this.idempotent.respond(req, res, { scope: ctx.actor.org.id, credential: ctx.actor.credentialId }, work);
    };
    const segment = firstSegment(path);
    let group = this.groups.get(segment);
    if (!group) {
      group = [];
      this.groups.set(segment, group);
    }
    group.push({
      method: method.toUpperCase(),
      name: `/v1${path}`,
      matches: match(path.replace(/\/+$/, ''), { end: true, trailing: true, sensitive: false }),
      handle,
    });
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
