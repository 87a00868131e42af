export { Ringlane, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS, type RinglaneOptions } from './client.js';
export {
  RinglaneError,
  RinglaneConnectionError,
  isRinglaneError,
  UNEXPECTED_RESPONSE,
  type ApiErrorCode,
  type ErrorCode,
  type ErrorMembers,
} from './errors.js';
export { PagePromise, type Page } from './pagination.js';
export { MAX_IDEMPOTENCY_KEY_LENGTH, MAX_RETRY_AFTER_MS, type RequestOptions } from './transport.js';
export {
  verifyWebhook,
  WebhookVerificationError,
  DEFAULT_TOLERANCE_SECONDS,
  type VerifyWebhookOptions,
  type WebhookHeaders,
  type WebhookScheme,
  type WebhookVerificationReason,
} from './webhooks.js';
export {
  isCallEvent,
  type BalanceLowEvent,
  type CallEvent,
  type CallEventType,
  type EventType,
  type OperationalEvent,
  type TenantDisabledEvent,
  type TenantSpendThresholdEvent,
  type WebhookEndpointDisabledEvent,
  type WebhookEvent,
} from './events.js';
export * from './generated/api.gen.js';
