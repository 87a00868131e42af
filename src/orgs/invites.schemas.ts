import Joi from 'joi';
import { isoTime, responseSchema } from '../http/schemas.js';
import { CAPABILITIES, type Capability } from '../auth/capabilities.js';
import { pageQuery } from '../http/pagination.js';
import { type PageParams } from '../lib/pagination.js';

export interface InviteInput {
  email: string;
  capabilities: Capability[];
}

/** `POST /v1/invites {email, capabilities}`; the email is compared lower-cased, as members' are. */
export const createInviteSchema = Joi.object({
  email: Joi.string().trim().lowercase().email().max(254).required(),
  capabilities: Joi.array()
    .items(Joi.string().valid(...CAPABILITIES))
    .unique()
    .required(),
});

export type InvitesQuery = PageParams;

export const listInvitesQuery = Joi.object(pageQuery);

export const inviteSchema = responseSchema('Invite', {
  id: Joi.string(),
  email: Joi.string(),
  capabilities: Joi.array().items(Joi.string().valid(...CAPABILITIES)),
  created_at: isoTime(),
  expires_at: isoTime(),
});
