import Joi from 'joi';
import { isoTime, responseSchema } from '../http/schemas.js';
import { pageQuery } from '../http/pagination.js';

/** What an agent does. */
export const AGENT_KINDS = ['appointment', 'reception', 'reminder', 'survey', 'sales', 'support', 'other'] as const;

export type AgentKind = (typeof AGENT_KINDS)[number];

const fields = {
  name: Joi.string().trim().min(1).max(200),
  kind: Joi.string().valid(...AGENT_KINDS),
  greeting: Joi.string().allow('').max(2_000),
  voice: Joi.string().trim().min(1).max(64),
  prompt: Joi.string().allow('').max(20_000),
};

/** `POST /v1/agents` (CONTRACT.md "Other areas"): `kind` defaults to `appointment`. */
export const createAgentSchema = Joi.object({
  ...fields,
  name: fields.name.required(),
  kind: fields.kind.default('appointment'),
});

/** `PATCH /v1/agents/{id}`: any field, at least one. */
export const updateAgentSchema = Joi.object(fields).min(1);

export const listAgentsQuery = Joi.object(pageQuery);

/** An agent, as every agents route answers it. */
export const agentSchema = responseSchema('Agent', {
  id: Joi.string(),
  name: Joi.string(),
  kind: Joi.string().valid(...AGENT_KINDS),
  greeting: Joi.string().allow(''),
  voice: Joi.string(),
  prompt: Joi.string().allow(''),
  created_at: isoTime(),
  updated_at: isoTime(),
});
