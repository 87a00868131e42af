import { Router } from 'express';
import Joi from 'joi';
import { db } from '../lib/db.js';
import { UnauthorizedError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { RouteDoc } from '../http/route-doc.js';
import { validate } from '../http/validate.js';
import { Member } from '../orgs/member.entity.js';
import { verifyPassword } from './passwords.js';
import { Session } from './session.entity.js';
import { hashToken, newSessionToken } from './tokens.js';

const SESSION_HOURS = 12;

const signInSchema = Joi.object({
  email: Joi.string().trim().lowercase().email().max(254).required(),
  password: Joi.string().min(1).max(1024).required(),
});

/**
 * Signs a member in with email and password and returns a session token (a Bearer token
 * like an API key, carrying the member's own capabilities). Wrong email and wrong password
 * answer alike, in alike time.
 */
export async function signIn(email: string, password: string): Promise<{ token: string; expires_at: string }> {
  const member = await db
    .getRepository(Member)
    .createQueryBuilder('m')
    .addSelect('m.passwordHash')
    .where('m.email = :email', { email })
    .getOne();
  const ok = await verifyPassword(password, member?.passwordHash ?? null);
  if (!member || !ok) throw new UnauthorizedError('Wrong email or password.');
  const token = newSessionToken();
  const expiresAt = new Date(Date.now() + SESSION_HOURS * 3_600_000);
  await db.getRepository(Session).insert({ id: newId('ses'), memberId: member.id, tokenHash: hashToken(token), expiresAt });
  return { token, expires_at: expiresAt.toISOString() };
}

/** `POST /v1/sessions`: the one `/v1` route that needs no credential. */
export function sessionRoutes(): { router: Router; routes: RouteDoc[] } {
  const router = Router();
  router.post('/sessions', async (req, res) => {
    const body = validate<{ email: string; password: string }>(signInSchema, req.body, 'body');
    res.status(201).json(await signIn(body.email, body.password));
  });
  return { router, routes: [{ method: 'post', path: '/sessions', body: signInSchema }] };
}

/** Deletes sessions that have expired; returns how many. */
export async function purgeExpiredSessions(): Promise<number> {
  const result = await db.getRepository(Session).createQueryBuilder().delete().where('expires_at <= now()').execute();
  return result.affected ?? 0;
}
