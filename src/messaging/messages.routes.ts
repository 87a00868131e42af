import type { ApiRouter } from '../http/endpoint.js';
import { pageOf } from '../http/pagination.js';
import { listMessagesQuery, messageSchema, type MessagesQuery } from './messages.schemas.js';
import type { MessagesService } from './messages.service.js';

/** `GET /v1/messages` (CONTRACT.md "Calls"): read only; the call engine writes the texts. */
export function messageRoutes(api: ApiRouter, messages: MessagesService): void {
  api.get<MessagesQuery>('/messages', {
    summary: 'List texts sent and received',
    query: listMessagesQuery,
    response: pageOf(messageSchema),
    handler: ({ actor, query }) => messages.list(actor, query),
  });
}
