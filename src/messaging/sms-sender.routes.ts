import type { ApiRouter } from '../http/endpoint.js';
import { smsSenderSchema } from './sms-sender.schemas.js';
import type { SmsSenderService, SmsSenderView } from './sms-sender.service.js';

/** `/v1/sms-sender` (SPEC.md §4.2; CONTRACT.md "Texting sender"): setting it needs `settings`. */
export function smsSenderRoutes(api: ApiRouter, sender: SmsSenderService): void {
  api
    .get('/sms-sender', {
      summary: 'Read the texting sender',
      response: smsSenderSchema,
      handler: ({ actor }) => sender.read(actor),
    })
    .put<SmsSenderView>('/sms-sender', {
      summary: 'Set the texting sender',
      capability: 'settings',
      body: smsSenderSchema,
      response: smsSenderSchema,
      handler: ({ actor, body }) => sender.set(actor, body),
    });
}
