import type Joi from 'joi';
import type { Actor } from '../auth/actor.js';
import type { Capability } from '../auth/capabilities.js';
import type { ApiRouter } from './endpoint.js';
import type { Page, PageParams } from '../lib/pagination.js';
import { pageOf } from './pagination.js';
import type { RouteErrors } from './route-doc.js';
import { idParams } from './schemas.js';

/** What the standard routes of an organization's resource call: one method per route. */
export interface ResourceService<C, U, Q extends PageParams, V> {
  readonly resource: string;
  create(actor: Actor, input: C): Promise<V>;
  list(actor: Actor, query: Q): Promise<Page<V>>;
  read(actor: Actor, id: string): Promise<V>;
  update(actor: Actor, id: string, input: U): Promise<V>;
  remove(actor: Actor, id: string): Promise<void>;
}

export interface ResourceRoutesSpec<C, U, Q extends PageParams, V> {
  path: string;
  capability: Capability;
  service: ResourceService<C, U, Q, V>;
  /** `view`: the resource as every route answers it. */
  schemas: { create: Joi.Schema; update: Joi.Schema; list: Joi.Schema; view: Joi.Schema };
  errors?: { write?: RouteErrors; remove?: RouteErrors };
}

const named = (resource: string) => `${/^[aeiou]/.test(resource) ? 'an' : 'a'} ${resource.replace(/_/g, ' ')}`;

/** The five routes of an organization's resource: POST and GET `<path>`, GET/PATCH/DELETE `<path>/:id`. */
export function resourceRoutes<C, U, Q extends PageParams, V>(api: ApiRouter, spec: ResourceRoutesSpec<C, U, Q, V>): void {
  const { path, capability, service, schemas, errors = {} } = spec;
  const one = `${path}/:id`;
  const oneParams = idParams(service.resource);
  const resource = named(service.resource);
  api
    .post<C>(path, {
      summary: `Create ${resource}`,
      errors: errors.write,
      capability,
      body: schemas.create,
      response: schemas.view,
      handler: ({ actor, body }) => service.create(actor, body),
    })
    .get<Q>(path, {
      summary: `List ${service.resource.replace(/_/g, ' ')}s`,
      query: schemas.list,
      response: pageOf(schemas.view),
      handler: ({ actor, query }) => service.list(actor, query),
    })
    .get<unknown, { id: string }>(one, {
      summary: `Read ${resource}`,
      params: oneParams,
      response: schemas.view,
      handler: ({ actor, params }) => service.read(actor, params.id),
    })
    .patch<U, unknown, { id: string }>(one, {
      summary: `Change ${resource}`,
      errors: errors.write,
      capability,
      params: oneParams,
      body: schemas.update,
      response: schemas.view,
      handler: ({ actor, params, body }) => service.update(actor, params.id, body),
    })
    .delete<unknown, { id: string }>(one, {
      summary: `Delete ${resource}`,
      errors: errors.remove,
      capability,
      params: oneParams,
      handler: ({ actor, params }) => service.remove(actor, params.id),
    });
}
