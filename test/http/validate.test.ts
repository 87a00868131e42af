import { expect } from 'chai';
import Joi from 'joi';
import { validate } from '../../src/http/validate.js';

// Every read's query goes through `validate`; an empty one's defaults are kept per schema.
describe('validate: an empty query', () => {
  it('gets its schema’s defaults each time, and what one request changes in them never reaches the next', () => {
    const schema = Joi.object({ limit: Joi.number().integer().default(20), status: Joi.string() });
    const first = validate<Record<string, unknown>>(schema, {}, 'query');
    expect(first).to.deep.equal({ limit: 20 });
    first.limit = 1;
    first.status = 'queued';
    expect(validate(schema, {}, 'query')).to.deep.equal({ limit: 20 });
    const again = validate<Record<string, unknown>>(schema, {}, 'query');
    again.limit = 2;
    expect(validate(schema, {}, 'query')).to.deep.equal({ limit: 20 });
    // A query that is not empty is validated as it comes.
    expect(validate(schema, { limit: '5' }, 'query')).to.deep.equal({ limit: 5 });
    expect(() => validate(schema, { nope: '1' }, 'query')).to.throw('"nope" is not allowed');
  });

  it('gets a default made by a function (a time, a counter) made anew for each request', () => {
    let made = 0;
    const schema = Joi.object({ n: Joi.number().default(() => ++made) });
    expect(validate(schema, {}, 'query')).to.deep.equal({ n: 1 });
    expect(validate(schema, {}, 'query')).to.deep.equal({ n: 2 });
  });
});
