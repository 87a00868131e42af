/** An error a request can end with: its HTTP status and CONTRACT.md code, rendered by src/http/error-handler.ts. */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export interface ErrorDetail {
  path: string;
  message: string;
}

export class InvalidRequestError extends AppError {
  constructor(message: string, details: ErrorDetail[] = []) {
    super(400, 'invalid_request', message, { details });
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = 'A valid API key or session token is required (Authorization: Bearer ...).') {
    super(401, 'unauthorized', message);
  }
}

export class ForbiddenError extends AppError {
  constructor(code: string, message: string, extra: Record<string, unknown> = {}) {
    super(403, code, message, extra);
  }
}

export class MissingCapabilityError extends ForbiddenError {
  constructor(required: string) {
    super('missing_capability', `This request needs the "${required}" capability.`, { required });
  }
}

export class NotFoundError extends AppError {
  /** @param resource snake_case resource name; the code becomes `<resource>_not_found`. */
  constructor(resource: string, message = `No such ${resource.replace(/_/g, ' ')}.`) {
    super(404, `${resource}_not_found`, message);
  }
}

export class ConflictError extends AppError {
  constructor(code: string, message: string, extra: Record<string, unknown> = {}) {
    super(409, code, message, extra);
  }
}

export class UnprocessableError extends AppError {
  constructor(code: string, message: string, extra: Record<string, unknown> = {}) {
    super(422, code, message, extra);
  }
}

export class RateLimitedError extends AppError {
  constructor(
    readonly retryAfterSeconds: number,
    message = 'Too many requests; try again later.',
  ) {
    super(429, 'rate_limited', message);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(limit: string) {
    super(413, 'payload_too_large', `The request body is larger than ${limit}.`);
  }
}

export class ServiceUnavailableError extends AppError {
  constructor(message: string) {
    super(503, 'service_unavailable', message);
  }
}
