import { expect } from 'chai';
import crypto, { createHmac } from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { signRinglane, signStandardWebhook, standardWebhookKey, verifyRinglaneSignature, verifyStandardWebhook } from '../../src/webhooks/verify.js';

// Expected values are computed here with node:crypto, not with the module under test.
const hexHmac = (key: Buffer | string, data: Buffer | string) => createHmac('sha256', key).update(data).digest('hex');
const b64Hmac = (key: Buffer | string, data: Buffer | string) => createHmac('sha256', key).update(data).digest('base64');

const SECRET = 'a-shared-secret-of-the-endpoint';
const BODY = '{"event":"call.completed","call_id":"call_123","sequence":4,"outcome":"positive"}';

/** Runs `fn` with `crypto.timingSafeEqual` recording the lengths of what it compares. */
function recordingTimingSafeEqual<T>(fn: () => T): { result: T; comparisons: Array<[number, number]> } {
  const original = crypto.timingSafeEqual;
  const comparisons: Array<[number, number]> = [];
  crypto.timingSafeEqual = (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
    comparisons.push([a.byteLength, b.byteLength]);
    return original(a, b);
  };
  // Named imports of a built-in module are live bindings: this makes them see the wrapper.
  syncBuiltinESMExports();
  try {
    return { result: fn(), comparisons };
  } finally {
    crypto.timingSafeEqual = original;
    syncBuiltinESMExports();
  }
}

describe('webhook signing (SPEC.md §6.2: X-Ringlane-Signature)', () => {
  it('signs the raw body as sha256=<hex HMAC-SHA256> keyed by the secret', () => {
    expect(signRinglane(BODY, SECRET)).to.equal(`sha256=${hexHmac(SECRET, BODY)}`);
    expect(signRinglane(Buffer.from(BODY), SECRET)).to.equal(`sha256=${hexHmac(SECRET, BODY)}`);
  });

  it('matches the RFC 4231 HMAC-SHA256 test case 2', () => {
    expect(signRinglane('what do ya want for nothing?', 'Jefe')).to.equal('sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
    expect(verifyRinglaneSignature('what do ya want for nothing?', 'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843', 'Jefe')).to.equal(
      true,
    );
  });

  it('accepts a signature made independently, over a string or the same bytes in a Buffer', () => {
    const header = `sha256=${hexHmac(SECRET, BODY)}`;
    expect(verifyRinglaneSignature(BODY, header, SECRET)).to.equal(true);
    expect(verifyRinglaneSignature(Buffer.from(BODY, 'utf8'), header, SECRET)).to.equal(true);
    expect(verifyRinglaneSignature(BODY, `sha256=${hexHmac(SECRET, BODY).toUpperCase()}`, SECRET)).to.equal(true);
  });

  it('signs the exact bytes: non-UTF-8 bytes, unicode and whitespace all count', () => {
    const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x00, 0x7d]);
    expect(verifyRinglaneSignature(bytes, `sha256=${hexHmac(SECRET, bytes)}`, SECRET)).to.equal(true);
    const unicode = '{"name":"Zoë 🦷"}';
    expect(verifyRinglaneSignature(Buffer.from(unicode), `sha256=${hexHmac(SECRET, Buffer.from(unicode, 'utf8'))}`, SECRET)).to.equal(true);
    const reformatted = JSON.stringify(JSON.parse(BODY), null, 2);
    expect(verifyRinglaneSignature(reformatted, signRinglane(BODY, SECRET), SECRET)).to.equal(false);
  });

  it('refuses a tampered body, another secret or a changed signature', () => {
    const header = signRinglane(BODY, SECRET);
    expect(verifyRinglaneSignature(BODY.replace('positive', 'negative'), header, SECRET)).to.equal(false);
    expect(verifyRinglaneSignature(`${BODY} `, header, SECRET)).to.equal(false);
    expect(verifyRinglaneSignature(BODY, header, `${SECRET}x`)).to.equal(false);
    const hex = header.slice('sha256='.length);
    const flipped = (hex[0] === '0' ? '1' : '0') + hex.slice(1);
    expect(verifyRinglaneSignature(BODY, `sha256=${flipped}`, SECRET)).to.equal(false);
    const lastFlipped = hex.slice(0, -1) + (hex.endsWith('0') ? '1' : '0');
    expect(verifyRinglaneSignature(BODY, `sha256=${lastFlipped}`, SECRET)).to.equal(false);
  });

  it('returns false, without throwing, on every malformed input', () => {
    const hex = hexHmac(SECRET, BODY);
    const headers: unknown[] = [
      undefined,
      null,
      '',
      'sha256=',
      hex,
      `sha1=${hex}`,
      `SHA256=${hex}`,
      `sha256=${hex.slice(0, 63)}`,
      `sha256=${hex}0`,
      `sha256=${hex}00`,
      `sha256=${hex.slice(0, 62)}zz`,
      `sha256=${Buffer.from(hex, 'hex').toString('base64')}`,
      `sha256=${hex},sha256=${hex}`,
      [`sha256=${hex}`],
      42,
      {},
    ];
    for (const header of headers) {
      expect(verifyRinglaneSignature(BODY, header as string, SECRET), String(header)).to.equal(false);
    }
    expect(verifyRinglaneSignature(BODY, `sha256=${hex}`, '')).to.equal(false);
    expect(verifyRinglaneSignature(BODY, `sha256=${hex}`, undefined as unknown as string)).to.equal(false);
    expect(verifyRinglaneSignature(undefined as unknown as string, `sha256=${hex}`, SECRET)).to.equal(false);
    expect(verifyRinglaneSignature({ toString: () => BODY } as unknown as string, `sha256=${hex}`, SECRET)).to.equal(false);
  });

  it('compares digests with crypto.timingSafeEqual on equal-length buffers, match or not', () => {
    const good = recordingTimingSafeEqual(() => verifyRinglaneSignature(BODY, signRinglane(BODY, SECRET), SECRET));
    expect(good.result).to.equal(true);
    expect(good.comparisons).to.deep.equal([[32, 32]]);
    const bad = recordingTimingSafeEqual(() => verifyRinglaneSignature(BODY, signRinglane(BODY, 'another-secret'), SECRET));
    expect(bad.result).to.equal(false);
    expect(bad.comparisons).to.deep.equal([[32, 32]]);
    // A header of the wrong length is refused before any comparison: timingSafeEqual would throw.
    const short = recordingTimingSafeEqual(() => verifyRinglaneSignature(BODY, 'sha256=abcd', SECRET));
    expect(short.result).to.equal(false);
    expect(short.comparisons).to.deep.equal([]);
  });
});

describe('webhook signing (CONTRACT.md: Standard Webhooks headers)', () => {
  const id = 'dlv_0123456789abcdefghijkl';
  const now = Date.UTC(2026, 10, 22, 18, 0, 0);
  const timestamp = String(Math.floor(now / 1000));
  const whsecKey = crypto.randomBytes(24);
  const WHSEC = `whsec_${whsecKey.toString('base64')}`;
  const headersFor = (signature: string, ts = timestamp, webhookId = id) => ({
    'webhook-id': webhookId,
    'webhook-timestamp': ts,
    'webhook-signature': signature,
  });

  it('matches the published Standard Webhooks example', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const body = '{"test": 2432232314}';
    const signature = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';
    expect(signStandardWebhook('msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, body, secret)).to.equal(signature);
    const headers = { 'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek', 'webhook-timestamp': '1614265330', 'webhook-signature': signature };
    expect(verifyStandardWebhook(body, headers, secret, { now: 1614265330_000 })).to.equal(true);
  });

  it('keys a whsec_ secret by its base64-decoded bytes, any other secret by its UTF-8 bytes', () => {
    expect(signStandardWebhook(id, timestamp, BODY, WHSEC)).to.equal(`v1,${b64Hmac(whsecKey, `${id}.${timestamp}.${BODY}`)}`);
    expect(signStandardWebhook(id, Number(timestamp), BODY, SECRET)).to.equal(`v1,${b64Hmac(SECRET, `${id}.${timestamp}.${BODY}`)}`);
    expect(standardWebhookKey(WHSEC)).to.deep.equal(whsecKey);
    expect(standardWebhookKey(SECRET)).to.deep.equal(Buffer.from(SECRET, 'utf8'));
  });

  it('accepts an independently computed signature, with a whsec_ or a plain secret', () => {
    const whsecSignature = `v1,${b64Hmac(whsecKey, `${id}.${timestamp}.${BODY}`)}`;
    expect(verifyStandardWebhook(BODY, headersFor(whsecSignature), WHSEC, { now })).to.equal(true);
    expect(verifyStandardWebhook(Buffer.from(BODY), headersFor(whsecSignature), WHSEC, { now })).to.equal(true);
    const plainSignature = `v1,${b64Hmac(SECRET, `${id}.${timestamp}.${BODY}`)}`;
    expect(verifyStandardWebhook(BODY, headersFor(plainSignature), SECRET, { now })).to.equal(true);
    // The whsec_ form is not the same key as its text.
    expect(verifyStandardWebhook(BODY, headersFor(`v1,${b64Hmac(WHSEC, `${id}.${timestamp}.${BODY}`)}`), WHSEC, { now })).to.equal(false);
  });

  it('takes Node request headers as they are', () => {
    const headers: import('node:http').IncomingHttpHeaders = {
      'content-type': 'application/json',
      ...headersFor(signStandardWebhook(id, timestamp, BODY, WHSEC)),
    };
    expect(verifyStandardWebhook(BODY, headers, WHSEC, { now })).to.equal(true);
  });

  it('accepts a header holding several space-separated signatures when one matches', () => {
    const good = signStandardWebhook(id, timestamp, BODY, WHSEC);
    const rotatedAway = signStandardWebhook(id, timestamp, BODY, 'whsec_' + crypto.randomBytes(24).toString('base64'));
    expect(verifyStandardWebhook(BODY, headersFor(`${rotatedAway} ${good}`), WHSEC, { now })).to.equal(true);
    expect(verifyStandardWebhook(BODY, headersFor(`${good} ${rotatedAway}`), WHSEC, { now })).to.equal(true);
    expect(verifyStandardWebhook(BODY, headersFor(`v1a,${good.slice(3)} ${good}`), WHSEC, { now })).to.equal(true);
    expect(verifyStandardWebhook(BODY, headersFor(`${rotatedAway}  v2,${good.slice(3)}`), WHSEC, { now })).to.equal(false);
    expect(verifyStandardWebhook(BODY, headersFor(`v1a,${good.slice(3)}`), WHSEC, { now })).to.equal(false);
  });

  it('compares every candidate with crypto.timingSafeEqual on 32-byte buffers', () => {
    const good = signStandardWebhook(id, timestamp, BODY, WHSEC);
    const other = signStandardWebhook(id, timestamp, BODY, SECRET);
    const run = recordingTimingSafeEqual(() => verifyStandardWebhook(BODY, headersFor(`${good} ${other}`), WHSEC, { now }));
    expect(run.result).to.equal(true);
    expect(run.comparisons).to.deep.equal([
      [32, 32],
      [32, 32],
    ]);
  });

  it('refuses a tampered body, id, timestamp, secret or signature', () => {
    const signature = signStandardWebhook(id, timestamp, BODY, WHSEC);
    expect(verifyStandardWebhook(BODY, headersFor(signature), WHSEC, { now })).to.equal(true);
    expect(verifyStandardWebhook(`${BODY} `, headersFor(signature), WHSEC, { now })).to.equal(false);
    expect(verifyStandardWebhook(BODY, headersFor(signature, timestamp, `${id}x`), WHSEC, { now })).to.equal(false);
    expect(verifyStandardWebhook(BODY, headersFor(signature, String(Number(timestamp) + 1)), WHSEC, { now })).to.equal(false);
    expect(verifyStandardWebhook(BODY, headersFor(signature), `whsec_${crypto.randomBytes(24).toString('base64')}`, { now })).to.equal(false);
    expect(verifyStandardWebhook(BODY, headersFor(signature), SECRET, { now })).to.equal(false);
    const raw = Buffer.from(signature.slice(3), 'base64');
    raw[31] ^= 1;
    expect(verifyStandardWebhook(BODY, headersFor(`v1,${raw.toString('base64')}`), WHSEC, { now })).to.equal(false);
  });

  it('refuses timestamps outside the tolerance (replay protection), both ways', () => {
    const at = (seconds: number) => {
      const ts = String(Number(timestamp) + seconds);
      return headersFor(signStandardWebhook(id, ts, BODY, WHSEC), ts);
    };
    expect(verifyStandardWebhook(BODY, at(-300), WHSEC, { now })).to.equal(true);
    expect(verifyStandardWebhook(BODY, at(300), WHSEC, { now })).to.equal(true);
    expect(verifyStandardWebhook(BODY, at(-301), WHSEC, { now })).to.equal(false);
    expect(verifyStandardWebhook(BODY, at(301), WHSEC, { now })).to.equal(false);
    expect(verifyStandardWebhook(BODY, at(-3600), WHSEC, { now, toleranceSeconds: 3600 })).to.equal(true);
    expect(verifyStandardWebhook(BODY, at(-61), WHSEC, { now, toleranceSeconds: 60 })).to.equal(false);
    // The default clock is Date.now(): a delivery signed now passes, one from an hour ago does not.
    const fresh = String(Math.floor(Date.now() / 1000));
    expect(verifyStandardWebhook(BODY, headersFor(signStandardWebhook(id, fresh, BODY, WHSEC), fresh), WHSEC)).to.equal(true);
    const stale = String(Math.floor(Date.now() / 1000) - 3600);
    expect(verifyStandardWebhook(BODY, headersFor(signStandardWebhook(id, stale, BODY, WHSEC), stale), WHSEC)).to.equal(false);
  });

  it('returns false, without throwing, on every malformed input', () => {
    const signature = signStandardWebhook(id, timestamp, BODY, WHSEC);
    const cases: Array<[string, unknown, unknown, { toleranceSeconds?: number; now?: number }?]> = [
      ['no headers', undefined, WHSEC],
      ['null headers', null, WHSEC],
      ['no id', { 'webhook-timestamp': timestamp, 'webhook-signature': signature }, WHSEC],
      ['an empty id', headersFor(signature, timestamp, ''), WHSEC],
      ['no timestamp', { 'webhook-id': id, 'webhook-signature': signature }, WHSEC],
      ['a timestamp that is not an integer', headersFor(signature, `${timestamp}.5`), WHSEC],
      ['a timestamp in milliseconds', headersFor(signature, String(now)), WHSEC],
      ['a negative timestamp', headersFor(signature, `-${timestamp}`), WHSEC],
      ['an ISO timestamp', headersFor(signature, new Date(now).toISOString()), WHSEC],
      ['no signature', { 'webhook-id': id, 'webhook-timestamp': timestamp }, WHSEC],
      ['an empty signature', headersFor(''), WHSEC],
      ['a signature without version', headersFor(signature.slice(3)), WHSEC],
      ['a signature that is not base64', headersFor('v1,!!!!'), WHSEC],
      ['a truncated signature', headersFor(signature.slice(0, -4)), WHSEC],
      ['a signature with an extra part', headersFor(`${signature},x`), WHSEC],
      ['headers given twice', { ...headersFor(signature), 'webhook-signature': [signature, signature] }, WHSEC],
      ['a whsec_ secret that is not base64', headersFor(signature), 'whsec_not*base64!'],
      ['an empty whsec_ secret', headersFor(signature), 'whsec_'],
      ['an empty secret', headersFor(signature), ''],
      ['no secret', headersFor(signature), undefined],
      ['a negative tolerance', headersFor(signature), WHSEC, { now, toleranceSeconds: -1 }],
      ['a tolerance that is not a number', headersFor(signature), WHSEC, { now, toleranceSeconds: Number.NaN }],
      ['a clock that is not a number', headersFor(signature), WHSEC, { now: Number.NaN }],
    ];
    for (const [what, headers, secret, options] of cases) {
      expect(verifyStandardWebhook(BODY, headers as never, secret as string, options ?? { now }), what).to.equal(false);
    }
    expect(verifyStandardWebhook(undefined as unknown as string, headersFor(signature), WHSEC, { now })).to.equal(false);
  });

  it('refuses to sign with a whsec_ secret that holds no valid base64', () => {
    expect(() => signStandardWebhook(id, timestamp, BODY, 'whsec_not*base64!')).to.throw(TypeError);
    expect(standardWebhookKey('whsec_QUJD=')).to.equal(null);
    expect(standardWebhookKey('whsec_QUJD')).to.deep.equal(Buffer.from('ABC'));
    expect(standardWebhookKey('whsec_QUI')).to.deep.equal(Buffer.from('AB'));
    expect(standardWebhookKey('whsec_QUI=')).to.deep.equal(Buffer.from('AB'));
    expect(standardWebhookKey('whsec_QUJ')).to.equal(null);
  });
});
