import { Resources } from './generated/api.gen.js';
import { Transport } from './transport.js';

/** Default time one attempt may take. */
export const DEFAULT_TIMEOUT_MS = 60_000;
/** Default retries of one call (so at most three attempts). */
export const DEFAULT_MAX_RETRIES = 2;

export interface RinglaneOptions {
  /** Where the API is, such as `https://api.example.com` (no `/v1`). */
  baseUrl: string;
  /** An API key (`rk_live_...`) or a session token; omit it only to call `sessions.create`. */
  apiKey?: string;
  /** Act inside this tenant (`X-Tenant-Id`) on every request; see also `forTenant`. */
  tenantId?: string;
  /** Time one attempt may take, in milliseconds. Default 60000. */
  timeoutMs?: number;
  /** Retries after a network error, a timeout, 429, 502, 503, 504 or 409 `idempotency_key_in_use`. Default 2. */
  maxRetries?: number;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

/**
 * A client of the Ringlane API: one property per resource group (`client.calls.create(...)`,
 * `client.tenants.list()`), each method typed from the API document.
 */
export class Ringlane extends Resources {
  readonly #options: RinglaneOptions;

  constructor(options: RinglaneOptions) {
    if (!options?.baseUrl) throw new TypeError('Ringlane: baseUrl is required, such as https://api.example.com');
    super(
      new Transport({
        baseUrl: options.baseUrl,
        apiKey: options.apiKey,
        tenantId: options.tenantId ?? null,
        timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
        headers: options.headers ?? {},
      }),
    );
    this.#options = options;
  }

  /** The tenant this client acts inside (`X-Tenant-Id`), or null for the account itself. */
  get tenantId(): string | null {
    return this.#options.tenantId ?? null;
  }

  /** A client with the same settings acting inside one of the reseller's tenants. */
  forTenant(tenantId: string): Ringlane {
    return new Ringlane({ ...this.#options, tenantId });
  }
}
