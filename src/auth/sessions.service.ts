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

// Failed sign-ins per 15 minutes. Per email 10: room for typos, ~1,000 guesses a day at one account.
// Per address 50: a team behind a NAT can mistype, one machine cannot spray a password across emails.
const FAILED_SIGN_INS_PER_EMAIL: Limit = { name: 'signin-failed-email', max: 10, windowMs: 15 * 60_000, counts: 'failed sign-ins per email' };
const FAILED_SIGN_INS_PER_ADDRESS: Limit = { name: 'signin-failed-address', max: 50, windowMs: 15 * 60_000, counts: 'failed sign-ins per client address' };

/** Members' sessions: sign-in with email and password, and purging expired ones. */
export class SessionsService {
  constructor(
    private readonly credentials: CredentialsRepository,
    private readonly orgs: OrganizationsRepository,
    private readonly redis: RedisClient,
  ) {}

  /** Wrong email and wrong password answer alike, in alike time; failed sign-ins are limited per email and address. */
  async signIn(email: string, password: string, clientAddress: string | undefined): Promise<{ token: string; expires_at: string }> {
    // A slot is taken before the password is checked, so over a limit even the right password is refused,
    // and both at once, so parallel guesses cannot overshoot. Given back unless the attempt failed. One hash
    // tag for all: sign-ins are few.
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

  purgeExpired(): Promise<number> {
    return this.credentials.purgeExpiredSessions();
  }

  private async memberWithPassword(email: string, password: string): Promise<Member | null> {
    const member = await this.orgs.findMemberWithPassword(email);
    const ok = await verifyPassword(password, member?.passwordHash ?? null);
    return member && ok ? member : null;
  }
}
