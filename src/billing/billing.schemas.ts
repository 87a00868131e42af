import Joi from 'joi';
import { pageQuery } from '../http/pagination.js';

/** The lists of the billing area take only `limit` and `cursor`. */
export const billingListQuery = Joi.object(pageQuery);
