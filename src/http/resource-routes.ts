import type Joi from 'joi';
import type { Actor } from '../auth/actor.js';
import type { Capability } from '../auth/capabilities.js';
import type { ApiRouter } from './endpoint.js';
import type { Page, PageParams } from './pagination.js';
import { idParams } from './schemas.js';

/** What the standard routes of an organization's resource call: one method per route. */
export interface ResourceService<C, U, Q extends PageParams, V> {
  /** snake_case name: an unknown id is 404 `<resource>_not_found`. */
  readonly resource: string;
  create(actor: Actor, input: C): Promise<V>;
  list(actor: Actor, query: Q): Promise<Page<V>>;
  read(actor: Actor, id: string): Promise<V>;
  update(actor: Actor, id: string, input: U): Promise<V>;
  remove(actor: Actor, id: string): Promise<void>;
}

export interface ResourceRoutesSpec<C, U, Q extends PageParams, V> {
  /** The collection path, such as `/agents`; one resource is `<path>/:id`. */
  path: string;
  /** The capability every write needs. */
  capability: Capability;
  service: ResourceService<C, U, Q, V>;
  schemas: { create: Joi.Schema; update: Joi.Schema; list: Joi.Schema };
}

/**
 * The five routes of a resource an organization owns: `POST <path>` (201), `GET <path>`
 * (a list page), `GET`, `PATCH` and `DELETE <path>/:id` (204).
 */
export function resourceRoutes<C, U, Q extends PageParams, V>(api: ApiRouter, spec: ResourceRoutesSpec<C, U, Q, V>): void {
  const { path, capability, service, schemas } = spec;
  const one = `${path}/:id`;
  const oneParams = idParams(service.resource);
  api
    .post<C>(path, {
      capability,
      body: schemas.create,
      handler: ({ actor, body }) => service.create(actor, body),
    })
    .get<Q>(path, {
      query: schemas.list,
      handler: ({ actor, query }) => service.list(actor, query),
    })
    .get<unknown, { id: string }>(one, {
      params: oneParams,
      handler: ({ actor, params }) => service.read(actor, params.id),
    })
    .patch<U, unknown, { id: string }>(one, {
      capability,
      params: oneParams,
      body: schemas.update,
      handler: ({ actor, params, body }) => service.update(actor, params.id, body),
    })
    .delete<unknown, { id: string }>(one, {
      capability,
      params: oneParams,
      handler: ({ actor, params }) => service.remove(actor, params.id),
    });
}
