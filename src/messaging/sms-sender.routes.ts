import type { ApiRouter } from '../http/endpoint.js';
import { smsSenderSchema } from './sms-sender.schemas.js';
import { readSmsSender, setSmsSender, type SmsSenderView } from './sms-sender.service.js';

/** `/v1/sms-sender` (SPEC.md §4.2; CONTRACT.md "Texting sender"): setting it needs `settings`. */
export function smsSenderRoutes(api: ApiRouter): void {
  api
    .get('/sms-sender', {
      summary: 'Read the texting sender',
      response: smsSenderSchema,
      handler: ({ actor }) => readSmsSender(actor),
    })
    .put<SmsSenderView>('/sms-sender', {
      summary: 'Set the texting sender',
      capability: 'settings',
      body: smsSenderSchema,
      response: smsSenderSchema,
      handler: ({ actor, body }) => setSmsSender(actor, body),
    });
}
