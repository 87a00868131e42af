import Joi from 'joi';
import { pageQuery } from '../http/pagination.js';

/** What an agent does. */
export const AGENT_KINDS = ['appointment', 'reception', 'reminder', 'survey', 'sales', 'support', 'other'] as const;

export type AgentKind = (typeof AGENT_KINDS)[number];

export interface AgentInput {
  name: string;
  kind: AgentKind;
  greeting?: string;
  voice?: string;
  prompt?: string;
}

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
