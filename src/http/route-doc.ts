import type Joi from 'joi';

/**
 * A route as the outside sees it: method, path and the schemas of its input. The app lists
 * every route it serves this way (`RinglaneApp.routes`), so tests can walk all of them.
 */
export interface RouteDoc {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Express path, such as `/v1/contacts/:id`. */
  path: string;
  params?: Joi.Schema;
  query?: Joi.Schema;
  body?: Joi.Schema;
}
