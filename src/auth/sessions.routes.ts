import { Router } from 'express';
import Joi from 'joi';
import { isoTime, responseSchema } from '../http/schemas.js';
import type { RouteDoc } from '../http/route-doc.js';
import { validate } from '../http/validate.js';
import type { SessionsService } from './sessions.service.js';

const sessionSchema = responseSchema('Session', { token: Joi.string(), expires_at: isoTime() });

const signInSchema = Joi.object({
  email: Joi.string().trim().lowercase().email().max(254).required(),
  password: Joi.string().min(1).max(1024).required(),
});

/**
 * The one `/v1` route without a credential; `router` is mounted at `path` (under `/v1`). `req.ip`
 * honours X-Forwarded-For only as far as `TRUST_PROXY` says.
 */
export function sessionRoutes(sessions: SessionsService): { path: string; router: Router; routes: RouteDoc[] } {
  const router = Router();
  router.post('/', async (req, res) => {
    const body = validate<{ email: string; password: string }>(signInSchema, req.body, 'body');
    res.status(201).json(await sessions.signIn(body.email, body.password, req.ip));
  });
  return {
    path: '/sessions',
    router,
    routes: [
      {
        method: 'post',
        path: '/sessions',
        summary: 'Sign in with email and password for a session token',
        body: signInSchema,
        status: 201,
        response: sessionSchema,
        caller: 'anyone',
        errors: { 401: ['unauthorized'], 429: ['rate_limited'] },
      },
    ],
  };
}
