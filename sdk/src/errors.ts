import type { ApiErrorCode } from './generated/error-codes.gen.js';
import type { Error as ErrorBody } from './generated/types.gen.js';

export type { ApiErrorCode };

/** An error `code`: one the API document lists (so editors complete them), or another string (a newer API's). */
export type ErrorCode = ApiErrorCode | (string & {});

/** The members of an error body: `code`, `message`, and what some codes add (`details`, `required`, `field`, `limit`, `from`, `to`, `request_id`). */
export type ErrorMembers = ErrorBody['error'];

/** `code` of an error answer whose body is not the API's error shape (a proxy's page, say). */
export const UNEXPECTED_RESPONSE = 'unexpected_response';

function parseErrorBody(text: string): ErrorMembers | null {
  try {
    const body = JSON.parse(text) as { error?: Partial<ErrorMembers> } | null;
    const error = body?.error;
    return error && typeof error.code === 'string' && typeof error.message === 'string' ? (error as ErrorMembers) : null;
  } catch {
    return null;
  }
}

/**
 * An error answer of the API (`{"error": {"code", "message", ...}}`). Narrow it by `code`, with
 * `isRinglaneError(err, 'tenant_not_found', ...)` or a `switch (err.code)`.
 */
export class RinglaneError<C extends ErrorCode = ErrorCode> extends Error {
  override readonly name = 'RinglaneError';
  /** The HTTP status. */
  readonly status: number;
  /** Stable, for programs (`message` is for people and may change). */
  readonly code: C;
  /** `invalid_request`: every problem with the input, with where it is. */
  readonly details: ErrorMembers['details'];
  /** `X-Request-Id` of the answer: quote it when asking about a request. */
  readonly requestId: string | null;
  /** The whole `error` member, with what some codes add (`required`, `field`, `limit`, ...). */
  readonly error: ErrorMembers;
  /** The answer's headers (`Retry-After` of a 429, ...). */
  readonly headers: Headers;

  constructor(status: number, error: ErrorMembers & { code: C }, headers: Headers) {
    super(error.message);
    this.status = status;
    this.code = error.code;
    this.details = error.details;
    this.error = error;
    this.headers = headers;
    this.requestId = headers.get('x-request-id') ?? error.request_id ?? null;
  }

  /** The error of an answer that is not 2xx, from its body's text. */
  static fromResponse(response: Response, text: string): RinglaneError {
    const error = parseErrorBody(text) ?? { code: UNEXPECTED_RESPONSE, message: `HTTP ${response.status} ${response.statusText}`.trim() };
    return new RinglaneError(response.status, error, response.headers);
  }
}

/** True when `err` is an API error, of one of `codes` if any are given; narrows `err.code` to them. */
export function isRinglaneError<C extends ErrorCode = ErrorCode>(err: unknown, ...codes: C[]): err is RinglaneError<C> {
  return err instanceof RinglaneError && (codes.length === 0 || codes.includes(err.code as C));
}

/** No answer: the connection failed, or every attempt timed out (`timedOut`), retries included. `cause` is the last failure. */
export class RinglaneConnectionError extends Error {
  override readonly name = 'RinglaneConnectionError';

  constructor(
    readonly method: string,
    readonly path: string,
    readonly timedOut: boolean,
    cause: unknown,
  ) {
    super(`${method} ${path}: ${timedOut ? 'timed out' : 'no answer from the Ringlane API'}`, { cause });
  }
}
