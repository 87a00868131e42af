import Joi from 'joi';

/** CONTRACT.md §2 "Lists": `limit` 1–100 (default 20) and an opaque `cursor`. */
export const pageQuery = {
  limit: Joi.number().integer().min(1).max(100).default(20),
  cursor: Joi.string().max(200),
};

/** The response schema of a list of `item`s (CONTRACT.md §2 "Lists"). */
export const pageOf = (item: Joi.Schema) => Joi.object({ data: Joi.array().items(item).required(), next_cursor: Joi.string().allow(null).required() });
