import Joi from 'joi';
import { responseSchema } from '../http/schemas.js';

export interface BookingPageChanges {
  enabled?: boolean;
  headline?: string | null;
}

/** `PUT /v1/booking-page {enabled?, headline?}`: at least one; a null headline shows the organization's name. */
export const bookingPageSchema = Joi.object({
  enabled: Joi.boolean().strict(),
  headline: Joi.string().trim().min(1).max(200).allow(null),
}).min(1);

/** The booking page settings, as `GET` and `PUT /v1/booking-page` answer them. */
export const bookingPageSettingsSchema = responseSchema('BookingPageSettings', {
  enabled: Joi.boolean(),
  headline: Joi.string().allow(null),
  url: Joi.string().allow(null).description("The public page's path; null for a tenant, which never has one."),
});
