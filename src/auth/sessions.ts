import { Router } from 'express';
import Joi from 'joi';
import { isoTime, responseSchema } from '../http/schemas.js';
import { db } from '../lib/db.js';
import { UnauthorizedError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { RouteDoc } from '../http/route-doc.js';
import { clientAddressSubject, reserveAll, type Limit } from '../lib/rate-limit.js';
import type { RedisClient } from '../lib/redis.js';
import { validate } from '../http/validate.js';
import { Member } from '../orgs/member.entity.js';
import { verifyPassword } from './passwords.js';
import { Session } from './session.entity.js';
import { hashToken, newSessionToken } from './tokens.js';

const SESSION_HOURS = 12;

/** `POST /v1/sessions`: a session token and when it expires. */
const sessionSchema = responseSchema('Session', { token: Joi.string(), expires_at: isoTime() });

const signInSchema = Joi.object({
  email: Joi.string().trim().lowercase().email().max(254).required(),
  password: Joi.string().min(1).max(1024).required(),
});

// Failed sign-ins allowed per 15 minutes. Per email: 10 leaves a member who mistypes room to
// spare, while a guesser gets about 1,000 tries a day at one account, hopeless against any
// password worth having. Per client address: 50 lets a team behind one NAT mistype, yet stops
// one machine spraying a common password across many emails.
const FAILED_SIGN_INS_PER_EMAIL: Limit = { name: 'signin-failed-email', max: 10, windowMs: 15 * 60_000, counts: 'failed sign-ins per email' };
const FAILED_SIGN_INS_PER_ADDRESS: Limit = { name: 'signin-failed-address', max: 50, windowMs: 15 * 60_000, counts: 'failed sign-ins per client address' };

/** The member with this email and password, or null; wrong email and wrong password take alike time. */
async function memberWithPassword(email: string, password: string): Promise<Member | null> {
  const member = await db
    .getRepository(Member)
    .createQueryBuilder('m')
    .addSelect('m.passwordHash')
    .where('m.email = :email', { email })
    .getOne();
  const ok = await verifyPassword(password, member?.passwordHash ?? null);
  return member && ok ? member : null;
}

/**
 * Signs a member in with email and password and returns a session token (a Bearer token
 * like an API key, carrying the member's own capabilities). Wrong email and wrong password
 * answer alike, in alike time. Failed sign-ins are limited per email and per client address.
 */
export async function signIn(redis: RedisClient, email: string, password: string, clientAddress: string | undefined): Promise<{ token: string; expires_at: string }> {
  // Every attempt takes a slot before the password is checked, so that once over a limit even
  // the right password is refused (else guessing would go on, the answer telling when it hit),
  // and both limits at once, so that parallel guesses cannot overshoot them. The slot is given
  // back unless the attempt failed: successes, and our own errors, are not failed sign-ins.
  // Taken together, the limits of every email and address share one hash tag (one cluster
  // slot); sign-ins are few next to the calls and queues that spread.
  const attempt = await reserveAll(redis, 'signin', [
    [FAILED_SIGN_INS_PER_EMAIL, email],
    [FAILED_SIGN_INS_PER_ADDRESS, clientAddressSubject(clientAddress)],
  ]);
  let member: Member | null;
  try {
    member = await memberWithPassword(email, password);
  } catch (err) {
    await attempt.release();
    throw err;
  }
  if (!member) throw new UnauthorizedError('Wrong email or password.');
  await attempt.release();
  const token = newSessionToken();
  const expiresAt = new Date(Date.now() + SESSION_HOURS * 3_600_000);
  await db.getRepository(Session).insert({ id: newId('ses'), memberId: member.id, tokenHash: hashToken(token), expiresAt });
  return { token, expires_at: expiresAt.toISOString() };
}

/**
 * `POST /v1/sessions`: the one `/v1` route that needs no credential. The client address is
 * `req.ip`, which honours X-Forwarded-For only as far as `TRUST_PROXY` says.
 */
export function sessionRoutes(redis: RedisClient): { router: Router; routes: RouteDoc[] } {
  const router = Router();
  router.post('/sessions', async (req, res) => {
    const body = validate<{ email: string; password: string }>(signInSchema, req.body, 'body');
    res.status(201).json(await signIn(redis, body.email, body.password, req.ip));
  });
  return { router, routes: [{ method: 'post', path: '/sessions', summary: 'Sign in with email and password for a session token', body: signInSchema, status: 201, response: sessionSchema, caller: 'anyone', errors: { 401: ['unauthorized'], 429: ['rate_limited'] } }] };
}

/** Deletes sessions that have expired; returns how many. */
export async function purgeExpiredSessions(): Promise<number> {
  const result = await db.getRepository(Session).createQueryBuilder().delete().where('expires_at <= now()').execute();
  return result.affected ?? 0;
}
