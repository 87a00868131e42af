import Joi from 'joi';
import { isoTime, responseSchema, timezone } from '../http/schemas.js';

export interface OrganizationChanges {
  name?: string;
  timezone?: string;
}

/** `PATCH /v1/organization {name?, timezone?}`: at least one. */
export const updateOrganizationSchema = Joi.object({
  name: Joi.string().trim().min(1).max(200),
  timezone: timezone(),
}).min(1);

/** The acting organization (a tenant, with `X-Tenant-Id`). */
export const organizationSchema = responseSchema('Organization', { id: Joi.string(), name: Joi.string(), timezone: Joi.string(), created_at: isoTime() });
