import { expect } from 'chai';
import { CALL_EVENT_FIELDS } from '../../src/calls/call-event.entity.js';
import { validate } from '../../src/http/validate.js';
import { InvalidRequestError } from '../../src/lib/errors.js';
import {
  createWebhookEndpointSchema,
  customHeaderNameProblem,
  isForbiddenCustomHeader,
  isHeaderName,
  isHeaderValue,
  updateWebhookEndpointSchema,
  webhookSecretProblem,
  webhookUrlProblem,
} from '../../src/webhooks/webhook-endpoints.schemas.js';

const VALID = { name: 'CRM', url: 'https://example.com/hooks', secret: 'a-long-enough-secret', outcomes: [] };

/** The `details` of the 400 a create body gets; [] when it is valid. */
function detailsOf(body: Record<string, unknown>, schema = createWebhookEndpointSchema): Array<{ path: string; message: string }> {
  try {
    validate(schema, body, 'body');
    return [];
  } catch (err) {
    expect(err).to.be.instanceOf(InvalidRequestError);
    return (err as InvalidRequestError).extra.details as Array<{ path: string; message: string }>;
  }
}

/** The `details` paths of the 400 a create body gets; [] when it is valid. */
const problemsOf = (body: Record<string, unknown>, schema = createWebhookEndpointSchema): string[] => detailsOf(body, schema).map((d) => d.path);

describe('webhook endpoint validation', () => {
  describe('header names (RFC 7230 token)', () => {
    it('accepts every tchar', () => {
      for (const name of ['X-Api-Key', 'authorization', 'X_Custom.Header', "x!#$%&'*+-.^_`|~9", 'A', 'a'.repeat(256)]) {
        expect(isHeaderName(name), name).to.equal(true);
      }
    });

    it('refuses empty names, separators, whitespace, control and non-ASCII characters', () => {
      const bad = [
        '',
        'X Header',
        'X-Header:',
        'X(Header)',
        'X<a>',
        'X@h',
        'X,Y',
        'X;Y',
        'X=Y',
        'X"Y',
        'X/Y',
        'X[Y]',
        'X?Y',
        'X{Y}',
        'X\\Y',
        'X\tY',
        'X\r\nY: z',
        'X\u0000',
        'Xé',
        '✓',
        'a'.repeat(257),
      ];
      for (const name of bad) expect(isHeaderName(name), JSON.stringify(name)).to.equal(false);
    });

    it('forbids the connection headers whatever their case, and nothing else', () => {
      for (const name of ['Host', 'host', 'HOST', 'Content-Length', 'content-length', 'Transfer-Encoding', 'TRANSFER-ENCODING', 'Connection', 'connection']) {
        expect(isForbiddenCustomHeader(name), name).to.equal(true);
        expect(customHeaderNameProblem(name), name).to.be.a('string');
      }
      for (const name of ['X-Host', 'Hosts', 'Content-Type', 'Keep-Alive', 'Authorization']) {
        expect(isForbiddenCustomHeader(name), name).to.equal(false);
      }
    });

    it('lets reserved delivery headers through (the delivery worker makes them win)', () => {
      for (const name of ['X-Ringlane-Delivery-Id', 'x-ringlane-signature', 'Content-Type', 'webhook-id', 'Webhook-Timestamp', 'WEBHOOK-SIGNATURE']) {
        expect(isHeaderName(name), name).to.equal(true);
        expect(customHeaderNameProblem(name), name).to.equal(null);
      }
    });
  });

  describe('header values', () => {
    it('accepts text, tabs, empty values and 1024 characters', () => {
      for (const value of ['Bearer abc.def', '', 'a\tb', ' padded ', 'x'.repeat(1024), 'caf\u00e9']) expect(isHeaderValue(value), value).to.equal(true);
    });

    it('refuses CR, LF, other control characters, characters Node cannot send, and 1025 characters', () => {
      for (const value of ['a\rb', 'a\nb', 'a\r\nX-Injected: 1', '\u0000', 'a\u007fb', 'a\u0001', '✓', 'x'.repeat(1025)]) {
        expect(isHeaderValue(value), JSON.stringify(value)).to.equal(false);
      }
    });
  });

  describe('urls', () => {
    it('accepts absolute http and https URLs up to 2048 characters', () => {
      const long = `https://example.com/${'a'.repeat(2048 - 'https://example.com/'.length)}`;
      for (const url of ['https://example.com', 'http://127.0.0.1:8080/hook?x=1', 'HTTPS://Example.com/a#b', 'https://[::1]/hook', long]) {
        expect(webhookUrlProblem(url), url).to.equal(null);
      }
    });

    it('refuses other schemes, relative URLs, whitespace, credentials and 2049 characters', () => {
      const bad = [
        '',
        'example.com/hook',
        '/hook',
        '//example.com/hook',
        'ftp://example.com',
        'javascript:alert(1)',
        'https:example.com',
        'https://',
        ' https://example.com',
        'https://exa mple.com',
        'https://example.com/\nx',
        'https://user:pass@example.com/hook',
        'https://user@example.com/hook',
        'https://:pass@example.com/hook',
        'https://@example.com/hook',
        `https://example.com/${'a'.repeat(2049 - 'https://example.com/'.length)}`,
      ];
      for (const url of bad) expect(webhookUrlProblem(url), JSON.stringify(url)).to.be.a('string');
      expect(webhookUrlProblem('https://user:pass@example.com')).to.match(/credentials/);
    });
  });

  describe('secrets', () => {
    it('accepts 8 to 512 characters, and whsec_ followed by base64', () => {
      for (const secret of ['12345678', 'x'.repeat(512), 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'whsec_QUJD', 'whsec_QUI=', 'whsec_QUI']) {
        expect(webhookSecretProblem(secret), secret).to.equal(null);
      }
    });

    it('refuses 7 or 513 characters, and whsec_ followed by anything but base64', () => {
      for (const secret of ['1234567', 'x'.repeat(513), 'whsec_not base64!', 'whsec_', 'whsec_QUJD=', 'whsec_QUJ', 'whsec_Q-_A', 'whsec_====']) {
        expect(webhookSecretProblem(secret), secret).to.be.a('string');
      }
    });
  });

  describe('the create and update schemas', () => {
    it('accepts a minimal and a full body', () => {
      expect(problemsOf(VALID)).to.deep.equal([]);
      const full = {
        ...VALID,
        outcomes: ['positive', 'neutral', 'negative', 'voicemail', 'unreachable'],
        field_aliases: { call_id: 'callId', sequence: 'seq' },
        extra_payload: { source: 'ringlane', nested: { list: [1, 'two', null, true] }, nothing: null },
        custom_headers: { 'X-Api-Key': 'k', 'X-Ringlane-Signature': 'mine', 'Content-Type': 'text/plain', 'webhook-id': 'x' },
      };
      expect(problemsOf(full)).to.deep.equal([]);
    });

    it('names the field of each problem', () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ ...VALID, url: 'ftp://x' }, 'url'],
        [{ ...VALID, secret: 'short' }, 'secret'],
        [{ ...VALID, outcomes: ['great'] }, 'outcomes.0'],
        [{ ...VALID, outcomes: ['positive', 'positive'] }, 'outcomes.1'],
        [{ ...VALID, field_aliases: { call_id: '' } }, 'field_aliases.call_id'],
        [{ ...VALID, field_aliases: { call_id: 7 } }, 'field_aliases.call_id'],
        [{ ...VALID, field_aliases: { '': 'x' } }, 'field_aliases.'],
        [{ ...VALID, field_aliases: { call_id: 'id', event: 'id' } }, 'field_aliases.event'],
        [{ ...VALID, field_aliases: { call_id: 'event' } }, 'field_aliases.call_id'],
        [{ ...VALID, field_aliases: { callid: 'id' } }, 'field_aliases.callid'],
        [{ ...VALID, field_aliases: { call_id: 'constructor' } }, 'field_aliases.call_id'],
        [{ ...VALID, extra_payload: { status: 'x' } }, 'extra_payload.status'],
        [{ ...VALID, field_aliases: { call_id: 'id' }, extra_payload: { id: 1 } }, 'extra_payload.id'],
        // As express parses them: "__proto__" an own key, which joi must not drop on the way.
        [{ ...VALID, ...JSON.parse('{"field_aliases": {"__proto__": "id"}}') }, 'field_aliases.__proto__'],
        [{ ...VALID, ...JSON.parse('{"field_aliases": {"__proto__": {"call_id": "id"}}}') }, 'field_aliases.__proto__'],
        [{ ...VALID, ...JSON.parse('{"extra_payload": {"__proto__": {"x": 1}}}') }, 'extra_payload.__proto__'],
        [{ ...VALID, custom_headers: { 'Bad Header': 'x' } }, 'custom_headers.Bad Header'],
        [{ ...VALID, custom_headers: { host: 'evil.example' } }, 'custom_headers.host'],
        [{ ...VALID, custom_headers: { 'X-A': 'a\r\nX-B: b' } }, 'custom_headers.X-A'],
        [{ ...VALID, custom_headers: { 'X-A': 1 } }, 'custom_headers.X-A'],
        [{ ...VALID, custom_headers: { 'X-A': '1', 'x-a': '2' } }, 'custom_headers.x-a'],
        [{ ...VALID, extra_payload: { a: 'x'.repeat(17_000) } }, 'extra_payload'],
        [{ ...VALID, extra_payload: [1] }, 'extra_payload'],
        [{ ...VALID, disabled: true }, 'disabled'],
      ];
      for (const [body, path] of cases) expect(problemsOf(body), JSON.stringify(body).slice(0, 120)).to.include(path);
    });

    it('words a refused customization like any other problem, and accepts Object.prototype names as static keys', () => {
      expect(detailsOf({ ...VALID, field_aliases: { call_id: 'event' } })).to.deep.equal([
        { path: 'field_aliases.call_id', message: '"field_aliases.call_id" renames to "event", the name the field "event" is delivered under' },
      ]);
      expect(
        problemsOf({ ...VALID, field_aliases: { call_id: 'event', event: 'call_id' }, extra_payload: { constructor: 1, toString: 'x', valueOf: true } }),
      ).to.deep.equal([]);
    });

    it('allows 20 entries in each map (every event field in field_aliases) and refuses 21', () => {
      const map = (n: number, value: (i: number) => unknown) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`X-Field-${i}`, value(i)]));
      // field_aliases can only have one entry per event field, fewer than 20.
      const everyField = Object.fromEntries(CALL_EVENT_FIELDS.map((field) => [field, `${field}_renamed`]));
      const twenty = { field_aliases: everyField, extra_payload: map(20, (i) => i), custom_headers: map(20, String) };
      expect(problemsOf({ ...VALID, ...twenty })).to.deep.equal([]);
      expect(problemsOf({ ...VALID, field_aliases: map(21, (i) => `alias_${i}`) })).to.deep.equal(['field_aliases']);
      expect(problemsOf({ ...VALID, extra_payload: map(21, (i) => i) })).to.deep.equal(['extra_payload']);
      expect(problemsOf({ ...VALID, custom_headers: map(21, String) })).to.deep.equal(['custom_headers']);
    });

    it('on update: any field, disabled as a boolean, at least one field', () => {
      expect(problemsOf({ disabled: false }, updateWebhookEndpointSchema)).to.deep.equal([]);
      expect(problemsOf({ secret: 'a-new-secret' }, updateWebhookEndpointSchema)).to.deep.equal([]);
      expect(problemsOf({ disabled: 'false' }, updateWebhookEndpointSchema)).to.deep.equal(['disabled']);
      expect(problemsOf({}, updateWebhookEndpointSchema)).to.deep.equal(['body']);
    });
  });
});
