import type Joi from 'joi';
import type { Capability } from '../auth/capabilities.js';

/** Codes a route answers beyond those of every route of its kind, by status: `{ 409: ['agent_in_use'] }`. */
export type RouteErrors = Partial<Record<400 | 401 | 402 | 403 | 404 | 409 | 422 | 429, readonly string[]>>;

/** A route as the outside sees it; tests walk every one and the OpenAPI document is built from them. */
export interface RouteDoc {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  summary: string;
  params?: Joi.Schema;
  query?: Joi.Schema;
  body?: Joi.Schema;
  status: number;
  /** The success body; absent only for 204 (the OpenAPI document refuses a `/v1` route without one). */
  response?: Joi.Schema;
  capability?: Capability;
  /** `forbidden`: closed inside a tenant (SPEC.md §4.1 rule 2); only routes taking an API key have the rule. */
  tenant?: 'allowed' | 'forbidden';
  caller: 'member' | 'operator' | 'anyone';
  errors?: RouteErrors;
  /** The route also answers `text/csv` (with `Accept: text/csv`): what it holds. */
  csv?: string;
}
