import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { ConflictError, InvalidRequestError, UnprocessableError } from '../lib/errors.js';
import type { IdempotencyRepository, RecordKey } from './idempotency.repository.js';

const MAX_KEY_LENGTH = 255;

export interface StoredResponse {
  status: number;
  body: unknown;
}

export interface IdempotentRequest {
  method: string;
  path: string;
  body: unknown;
}

export type Claim = { kind: 'claimed' } | { kind: 'replay'; response: StoredResponse };

/**
 * Whose record it is: the acting organization (the tenant when `X-Tenant-Id` is sent, or
 * `operator`) and the credential that sent the request (an API key's or a session's id).
 * Another credential's request with the same Idempotency-Key is a request of its own.
 */
export interface RecordOwner {
  scope: string;
  credential: string;
}

/**
 * What is stored for an Idempotency-Key: the key's SHA-256, an HMAC of the request and the
 * response sealed with AES-256-GCM, both keyed by a secret derived from the Idempotency-Key
 * itself. Responses may carry secrets (a new raw API key) and requests may carry passwords;
 * the database alone reveals neither: only a client holding the Idempotency-Key can replay.
 */
export class RecordSecrets {
  readonly keyHash: string;
  private readonly secret: Buffer;

  constructor(owner: RecordOwner, key: string) {
    this.keyHash = createHash('sha256').update(key).digest('hex');
    this.secret = Buffer.from(hkdfSync('sha256', key, `${owner.scope}/${owner.credential}`, 'ringlane idempotency v2', 32));
  }

  fingerprint(request: IdempotentRequest): string {
    return createHmac('sha256', this.secret)
      .update(`${request.method} ${request.path}\n${JSON.stringify(request.body ?? null)}`)
      .digest('hex');
  }

  seal(body: unknown): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.secret, iv);
    const sealed = Buffer.concat([cipher.update(JSON.stringify(body ?? null), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
  }

  open(sealed: string): unknown {
    const raw = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.secret, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8'));
  }
}

export function checkKey(key: string): void {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw new InvalidRequestError(`Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters.`, [
      { path: 'Idempotency-Key', message: `must be 1 to ${MAX_KEY_LENGTH} characters` },
    ]);
  }
}

/** The record's key: its owner and the Idempotency-Key's hash. */
const recordKey = (owner: RecordOwner, secrets: RecordSecrets): RecordKey => ({ scope: owner.scope, credential: owner.credential, keyHash: secrets.keyHash });

/**
 * Idempotency records in Postgres. `claim` either reserves the key for this request
 * (race-free across processes: see `IdempotencyRepository.claim`) or returns what to do instead.
 */
export class IdempotencyService {
  constructor(private readonly repository: IdempotencyRepository) {}

  async claim(owner: RecordOwner, secrets: RecordSecrets, request: IdempotentRequest): Promise<Claim> {
    const fingerprint = secrets.fingerprint(request);
    const key = recordKey(owner, secrets);
    if (await this.repository.claim(key, fingerprint)) return { kind: 'claimed' };

    const row = await this.repository.find(key);
    if (!row) return this.claim(owner, secrets, request); // purged in between: try again
    if (row.request_hash !== fingerprint) {
      throw new UnprocessableError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request.');
    }
    if (row.response_status === null) {
      throw new ConflictError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed.');
    }
    return { kind: 'replay', response: { status: row.response_status, body: secrets.open(row.response_sealed!) } };
  }

  async complete(owner: RecordOwner, secrets: RecordSecrets, response: StoredResponse): Promise<void> {
    await this.repository.complete(recordKey(owner, secrets), response.status, secrets.seal(response.body));
  }

  /** Frees the key: the request did not succeed, so the client may send it again. */
  async release(owner: RecordOwner, secrets: RecordSecrets): Promise<void> {
    await this.repository.release(recordKey(owner, secrets));
  }

  /** Deletes records past their 24 hours (the maintenance worker); returns how many. */
  purgeExpired(): Promise<number> {
    return this.repository.purgeExpired();
  }
}
