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

/** The acting organization (or `operator`) and the credential: another credential's same key is its own request. */
export interface RecordOwner {
  scope: string;
  credential: string;
}

/**
 * The Idempotency-Key's hash, an HMAC of the request and the AES-256-GCM-sealed response, keyed from the
 * key itself: responses may hold secrets, so only a client holding the key can replay.
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

const recordKey = (owner: RecordOwner, secrets: RecordSecrets): RecordKey => ({ scope: owner.scope, credential: owner.credential, keyHash: secrets.keyHash });

/** `claim` reserves the key for this request (race-free across processes) or says what to do instead. */
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

  /** The maintenance worker's purge; returns how many. */
  purgeExpired(): Promise<number> {
    return this.repository.purgeExpired();
  }
}
