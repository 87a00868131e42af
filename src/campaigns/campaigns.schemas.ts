import Joi from 'joi';
import { simulateSchema } from '../calls/calls.schemas.js';
import type { SimulateScript } from '../calls/call.entity.js';
import { pageQuery } from '../http/pagination.js';
import { idParams, idReference, isoTime, responseSchema } from '../http/schemas.js';
import type { CampaignState } from './campaign.entity.js';

const clock = () =>
  Joi.string()
    .pattern(/^([01]\d|2[0-3]):[0-5]\d$/)
    .messages({ 'string.pattern.base': '{{#label}} must be a 24-hour time "HH:MM"' });

const callingHours = Joi.object({ start: clock().required(), end: clock().required() })
  .custom((v: { start: string; end: string }, helpers) => (v.start === v.end ? helpers.error('hours.empty') : v))
  .messages({ 'hours.empty': '{{#label}} start and end must differ' });

const weekdays = Joi.array().items(Joi.number().integer().min(1).max(7)).min(1).max(7).unique();

const retry = Joi.object({
  max_retries: Joi.number().integer().min(0).max(10).default(0),
  delay_seconds: Joi.number()
    .integer()
    .min(0)
    .max(7 * 24 * 3600)
    .default(0),
});

export const createCampaignSchema = Joi.object({
  name: Joi.string().trim().min(1).max(200).required(),
  agent_id: idReference().required(),
  contact_ids: Joi.array().items(idReference()).min(1).max(10_000).unique().required(),
  calling_hours: callingHours.allow(null),
  weekdays: weekdays.allow(null),
  retry,
  simulate: simulateSchema,
});

export const updateCampaignSchema = Joi.object({
  name: Joi.string().trim().min(1).max(200),
  calling_hours: callingHours.allow(null),
  weekdays: weekdays.allow(null),
  retry,
  state: Joi.string().valid('running', 'paused', 'completed'),
}).min(1);

export const listCampaignsQuery = Joi.object({ ...pageQuery, state: Joi.string().valid('draft', 'running', 'paused', 'completed') });

export const campaignIdParams = idParams('campaign');

interface Window {
  calling_hours?: { start: string; end: string } | null;
  weekdays?: number[] | null;
  retry?: { max_retries: number; delay_seconds: number };
}

export interface CreateCampaignInput extends Window {
  name: string;
  agent_id: string;
  contact_ids: string[];
  simulate?: SimulateScript;
}

export interface UpdateCampaignInput extends Window {
  name?: string;
  state?: Exclude<CampaignState, 'draft'>;
}

const count = () => Joi.number().integer().min(0);

/** A campaign, as every campaigns route answers it. */
export const campaignSchema = responseSchema('Campaign', {
  id: Joi.string(),
  name: Joi.string(),
  agent_id: Joi.string(),
  state: Joi.string().valid('draft', 'running', 'paused', 'completed'),
  calling_hours: Joi.object({ start: clock().required(), end: clock().required() }).allow(null),
  weekdays: Joi.array().items(Joi.number().integer()).allow(null),
  retry: Joi.object({ max_retries: count(), delay_seconds: count() }),
  contacts: Joi.object({ total: count(), pending: count(), calling: count(), done: count(), skipped: count() }),
  created_at: isoTime(),
  updated_at: isoTime(),
  completed_at: isoTime().allow(null),
});
