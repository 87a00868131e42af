import Joi from 'joi';
import { pageQuery, type PageParams } from '../http/pagination.js';

export type MessagesQuery = PageParams & { call_id?: string };

/** `GET /v1/messages`, optionally only the text of one call. */
export const listMessagesQuery = Joi.object({ ...pageQuery, call_id: Joi.string().max(40) });
