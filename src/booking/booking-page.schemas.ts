import Joi from 'joi';

export interface BookingPageChanges {
  enabled?: boolean;
  headline?: string | null;
}

/** `PUT /v1/booking-page {enabled?, headline?}`: at least one; a null headline shows the organization's name. */
export const bookingPageSchema = Joi.object({
  enabled: Joi.boolean().strict(),
  headline: Joi.string().trim().min(1).max(200).allow(null),
}).min(1);
