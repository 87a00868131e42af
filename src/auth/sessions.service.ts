import { UnauthorizedError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { clientAddressSubject, reserveAll, type Limit } from '../lib/rate-limit.js';
import type { RedisClient } from '../lib/redis.js';
import type { Member } from '../orgs/member.entity.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';
import type { CredentialsRepository } from './credentials.repository.js';
import { verifyPassword } from './passwords.js';
import { hashToken, newSessionToken } from './tokens.js';

const SESSION_HOURS = 12;

// Failed sign-ins allowed per 15 minutes. Per email: 10 leaves a member who mistypes room to
// spare, while a guesser gets about 1,000 tries a day at one account, hopeless against any
// password worth having. Per client address: 50 lets a team behind one NAT mistype, yet stops
// one machine spraying a common password across many emails.
const FAILED_SIGN_INS_PER_EMAIL: Limit = { name: 'signin-failed-email', max: 10, windowMs: 15 * 60_000, counts: 'failed sign-ins per email' };
const FAILED_SIGN_INS_PER_ADDRESS: Limit = { name: 'signin-failed-address', max: 50, windowMs: 15 * 60_000, counts: 'failed sign-ins per client address' };

/** Members' sessions: signing in with email and password, and purging expired sessions. */
export class SessionsService {
  constructor(
    private readonly credentials: CredentialsRepository,
    private readonly orgs: OrganizationsRepository,
    private readonly redis: RedisClient,
  ) {}

  /**
   * Signs a member in with email and password and returns a session token (a Bearer token
   * like an API key, carrying the member's own capabilities). Wrong email and wrong password
   * answer alike, in alike time. Failed sign-ins are limited per email and per client address.
   */
  async signIn(email: string, password: string, clientAddress: string | undefined): Promise<{ token: string; expires_at: string }> {
    // Every attempt takes a slot before the password is checked, so that once over a limit even
    // the right password is refused (else guessing would go on, the answer telling when it hit),
    // and both limits at once, so that parallel guesses cannot overshoot them. The slot is given
    // back unless the attempt failed: successes, and our own errors, are not failed sign-ins.
    // Taken together, the limits of every email and address share one hash tag (one cluster
    // slot); sign-ins are few next to the calls and queues that spread.
    const attempt = await reserveAll(this.redis, 'signin', [
      [FAILED_SIGN_INS_PER_EMAIL, email],
      [FAILED_SIGN_INS_PER_ADDRESS, clientAddressSubject(clientAddress)],
    ]);
    let member: Member | null;
    try {
      member = await this.memberWithPassword(email, password);
    } catch (err) {
      await attempt.release();
      throw err;
    }
    if (!member) throw new UnauthorizedError('Wrong email or password.');
    await attempt.release();
    const token = newSessionToken();
    const expiresAt = new Date(Date.now() + SESSION_HOURS * 3_600_000);
    await this.credentials.insertSession({ id: newId('ses'), memberId: member.id, tokenHash: hashToken(token), expiresAt });
    return { token, expires_at: expiresAt.toISOString() };
  }

  /** Deletes sessions that have expired; returns how many (the maintenance worker's `purge-expired`). */
  purgeExpired(): Promise<number> {
    return this.credentials.purgeExpiredSessions();
  }

  /** The member with this email and password, or null; wrong email and wrong password take alike time. */
  private async memberWithPassword(email: string, password: string): Promise<Member | null> {
    const member = await this.orgs.findMemberWithPassword(email);
    const ok = await verifyPassword(password, member?.passwordHash ?? null);
    return member && ok ? member : null;
  }
}
