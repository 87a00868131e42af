// Secret rotation without a gap (CONTRACT.md §4 "Webhook secret rotation"):
// the route through the HTTP API, then real deliveries (calls, relay and webhooks processes)
// verified at a real receiver with the Standard Webhooks library.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { db } from '../helpers/db.js';
import { verifyRinglaneSignature } from '../../src/webhooks/verify.js';
import { asCaller, createOrg, expectError, expectStatus, keyWith, walkList, type Caller, type TestOrg } from '../helpers/api.js';
import { expectInvalid, ISO_UTC } from '../helpers/org-resource.js';
import { ServiceProcesses } from '../helpers/processes.js';
import { startReceiver, type Received, type Receiver } from '../helpers/receiver.js';
import { createTenant, reseller } from '../helpers/tenants.js';
import { placeCall, voiceOrg, type VoiceOrg } from '../helpers/voice.js';
import { WebhookEndpointsRepository } from '../../src/webhooks/webhook-endpoints.repository.js';

const PATH = '/v1/webhook-endpoints';
const DAY = 86_400;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A new Standard Webhooks secret: `whsec_` and the base64 of 24 random bytes. */
const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

const rotatePath = (id: string) => `${PATH}/${id}/rotate-secret`;

/** The endpoint's secrets as stored (never shown by the API). */
async function storedSecrets(id: string): Promise<{ secret: string; previous_secret: string | null; previous_secret_expires_at: Date | null }> {
  const [row] = await db.query('SELECT secret, previous_secret, previous_secret_expires_at FROM webhook_endpoints WHERE id = $1', [id]);
  return row;
}

/** Seconds from now to `iso`. */
const secondsUntil = (iso: string) => (Date.parse(iso) - Date.now()) / 1000;

describe('webhook secret rotation (CONTRACT.md §4 "Webhook secret rotation")', () => {
  describe('POST /v1/webhook-endpoints/{id}/rotate-secret', () => {
    let org: TestOrg;
    let owner: Caller;
    before(async () => {
      org = await createOrg();
      owner = asCaller(org.key);
    });

    const endpointWith = async (caller: Caller = owner, secret = newSecret()) => {
      const res = await caller.post(PATH, { name: 'Rotating', url: 'https://hooks.example.com/rotate', secret, outcomes: [] });
      return { endpoint: expectStatus(res, 201).body, secret };
    };

    it('answers 200 with the endpoint, whose secret_rotation says when the previous secret stops signing (24 h by default); never a secret', async () => {
      const { endpoint, secret: old } = await endpointWith();
      expect(endpoint.secret_rotation).to.equal(null);
      const fresh = newSecret();
      const res = expectStatus(await owner.post(rotatePath(endpoint.id), { secret: fresh }), 200);
      const { secret_rotation, ...rest } = res.body;
      const { secret_rotation: before, ...unchanged } = endpoint;
      expect(rest).to.deep.equal(unchanged);
      expect(secret_rotation).to.have.all.keys('previous_expires_at');
      expect(secret_rotation.previous_expires_at).to.match(ISO_UTC);
      expect(secondsUntil(secret_rotation.previous_expires_at)).to.be.within(DAY - 60, DAY + 1);
      expect(res.text).to.not.include(fresh).and.not.include(old);

      const stored = await storedSecrets(endpoint.id);
      expect(stored).to.deep.include({ secret: fresh, previous_secret: old });
      expect(stored.previous_secret_expires_at!.toISOString()).to.equal(secret_rotation.previous_expires_at);
      // Every view of the endpoint shows the rotation.
      expect(expectStatus(await owner.get(`${PATH}/${endpoint.id}`), 200).body).to.deep.equal(res.body);
      const listed = (await walkList(owner, PATH, 100)).items.find((e) => e.id === endpoint.id);
      expect(listed).to.deep.equal(res.body);
    });

    it('keeps the previous secret for overlap_seconds (at most 7 days); 0 retires it at once', async () => {
      const { endpoint } = await endpointWith();
      const week = expectStatus(await owner.post(rotatePath(endpoint.id), { secret: newSecret(), overlap_seconds: 7 * DAY }), 200).body;
      expect(secondsUntil(week.secret_rotation.previous_expires_at)).to.be.within(7 * DAY - 60, 7 * DAY + 1);
      const minute = expectStatus(await owner.post(rotatePath(endpoint.id), { secret: newSecret(), overlap_seconds: 60 }), 200).body;
      expect(secondsUntil(minute.secret_rotation.previous_expires_at)).to.be.within(0, 61);

      const latest = newSecret();
      const now = expectStatus(await owner.post(rotatePath(endpoint.id), { secret: latest, overlap_seconds: 0 }), 200).body;
      expect(now.secret_rotation).to.equal(null);
      expect(await storedSecrets(endpoint.id)).to.deep.equal({ secret: latest, previous_secret: null, previous_secret_expires_at: null });
    });

    it('a rotation during an overlap keeps only the secret it replaces', async () => {
      const { endpoint } = await endpointWith();
      const second = newSecret();
      const third = newSecret();
      expectStatus(await owner.post(rotatePath(endpoint.id), { secret: second }), 200);
      expectStatus(await owner.post(rotatePath(endpoint.id), { secret: third, overlap_seconds: 3600 }), 200);
      expect(await storedSecrets(endpoint.id)).to.deep.include({ secret: third, previous_secret: second });
    });

    it('shows secret_rotation null once the overlap is over', async () => {
      const { endpoint } = await endpointWith();
      const rotated = expectStatus(await owner.post(rotatePath(endpoint.id), { secret: newSecret(), overlap_seconds: 1 }), 200).body;
      expect(rotated.secret_rotation).to.not.equal(null);
      await sleep(Math.max(0, Date.parse(rotated.secret_rotation.previous_expires_at) - Date.now()) + 50);
      expect(expectStatus(await owner.get(`${PATH}/${endpoint.id}`), 200).body.secret_rotation).to.equal(null);
    });

    it('PATCH with a secret replaces it at once and ends the overlap', async () => {
      const { endpoint } = await endpointWith();
      expectStatus(await owner.post(rotatePath(endpoint.id), { secret: newSecret() }), 200);
      const replaced = newSecret();
      const patched = expectStatus(await owner.patch(`${PATH}/${endpoint.id}`, { secret: replaced }), 200).body;
      expect(patched.secret_rotation).to.equal(null);
      expect(await storedSecrets(endpoint.id)).to.deep.equal({ secret: replaced, previous_secret: null, previous_secret_expires_at: null });
      // Another change leaves a running overlap alone.
      const again = expectStatus(await owner.post(rotatePath(endpoint.id), { secret: newSecret() }), 200).body;
      expect(expectStatus(await owner.patch(`${PATH}/${endpoint.id}`, { name: 'Renamed' }), 200).body.secret_rotation).to.deep.equal(again.secret_rotation);
    });

    describe('refuses bad input with 400, and changes nothing', () => {
      const cases: Array<[string, Record<string, unknown>, string]> = [
        ['no secret', { overlap_seconds: 60 }, 'secret'],
        ['a secret of 7 characters', { secret: '1234567' }, 'secret'],
        ['a secret of 513 characters', { secret: 'x'.repeat(513) }, 'secret'],
        ['a secret of spaces', { secret: ' '.repeat(12) }, 'secret'],
        ['a secret of whitespace only', { secret: '\t \n \u00a0\u2003    ' }, 'secret'],
        ['a whsec_ secret that is not base64', { secret: 'whsec_not base64!' }, 'secret'],
        ['a secret that is not a string', { secret: 12345678 }, 'secret'],
        ['an overlap over 7 days', { secret: newSecret(), overlap_seconds: 7 * DAY + 1 }, 'overlap_seconds'],
        ['a negative overlap', { secret: newSecret(), overlap_seconds: -1 }, 'overlap_seconds'],
        ['an overlap that is not an integer', { secret: newSecret(), overlap_seconds: 1.5 }, 'overlap_seconds'],
        ['an overlap given as a string', { secret: newSecret(), overlap_seconds: '60' }, 'overlap_seconds'],
        ['a null overlap', { secret: newSecret(), overlap_seconds: null }, 'overlap_seconds'],
        ['an unknown field', { secret: newSecret(), overlap: 60 }, 'overlap'],
      ];
      for (const [what, body, path] of cases) {
        it(what, async () => {
          const { endpoint } = await endpointWith();
          const before = await storedSecrets(endpoint.id);
          expectInvalid(await owner.post(rotatePath(endpoint.id), body), path);
          expect(await storedSecrets(endpoint.id)).to.deep.equal(before);
        });
      }
    });

    it('needs the webhooks capability', async () => {
      const { endpoint } = await endpointWith();
      const limited = asCaller(await keyWith(org, ['operate', 'settings', 'api_keys']));
      expect(expectError(await limited.post(rotatePath(endpoint.id), { secret: newSecret() }), 403, 'missing_capability').required).to.equal('webhooks');
      expect((await storedSecrets(endpoint.id)).previous_secret).to.equal(null);
      const writer = asCaller(await keyWith(org, ['webhooks']));
      expectStatus(await writer.post(rotatePath(endpoint.id), { secret: newSecret() }), 200);
    });

    it("answers 404 webhook_endpoint_not_found for an unknown id and for another organization's endpoint, which stays as it was", async () => {
      expectError(await owner.post(rotatePath(`whe_${'0'.repeat(22)}`), { secret: newSecret() }), 404, 'webhook_endpoint_not_found');
      const other = asCaller((await createOrg()).key);
      const { endpoint: theirs, secret } = await endpointWith(other);
      expectError(await owner.post(rotatePath(theirs.id), { secret: newSecret() }), 404, 'webhook_endpoint_not_found');
      expect(await storedSecrets(theirs.id)).to.deep.equal({ secret, previous_secret: null, previous_secret_expires_at: null });
    });

    it("works inside a tenant (X-Tenant-Id) on the tenant's own endpoints only", async () => {
      const account = await reseller();
      const tenant = await createTenant(account);
      const inside = account.inside(tenant.id);
      const { endpoint: tenants, secret } = await endpointWith(inside);
      const { endpoint: resellers } = await endpointWith(account.as);
      const rotated = expectStatus(await inside.post(rotatePath(tenants.id), { secret: newSecret(), overlap_seconds: 600 }), 200).body;
      expect(rotated.id).to.equal(tenants.id);
      expect((await storedSecrets(tenants.id)).previous_secret).to.equal(secret);
      expectError(await inside.post(rotatePath(resellers.id), { secret: newSecret() }), 404, 'webhook_endpoint_not_found');
      expectError(await account.as.post(rotatePath(tenants.id), { secret: newSecret() }), 404, 'webhook_endpoint_not_found');
      expectStatus(await account.as.patch(`/v1/tenants/${tenant.id}`, { disabled: true }), 200);
      expectError(await inside.post(rotatePath(tenants.id), { secret: newSecret() }), 403, 'tenant_disabled');
    });

    it('the maintenance worker forgets previous secrets whose overlap is over, and keeps running ones', async () => {
      const { endpoint: ended } = await endpointWith();
      const { endpoint: running } = await endpointWith();
      expectStatus(await owner.post(rotatePath(ended.id), { secret: newSecret() }), 200);
      expectStatus(await owner.post(rotatePath(running.id), { secret: newSecret() }), 200);
      await db.query(`UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`, [ended.id]);
      const before = await storedSecrets(running.id);
      expect(await new WebhookEndpointsRepository(db).forgetExpiredSecrets()).to.be.at.least(1);
      expect(await storedSecrets(ended.id)).to.deep.include({ previous_secret: null, previous_secret_expires_at: null });
      expect(await storedSecrets(running.id)).to.deep.equal(before);
    });
  });

  describe('deliveries during and after an overlap, verified by a real receiver with the Standard Webhooks library', function () {
    this.timeout(90_000);
    const services = new ServiceProcesses();
    let receiver: Receiver;
    /** Every secret this test uses; for each delivery received, the ones its signatures verify with. */
    const secrets: string[] = [];
    const verifiedBy = new Map<Received, { standard: string[]; ringlane: string[] }>();

    /** What a receiver holding only `secret` concludes: the Standard Webhooks library's verify. */
    const standardVerifies = (secret: string, r: Received) => {
      try {
        new Webhook(secret).verify(r.raw, r.headers as Record<string, string>);
        return true;
      } catch {
        return false;
      }
    };

    before(async () => {
      // Verified as each delivery arrives (the library refuses timestamps 5 minutes away from now).
      receiver = await startReceiver((r) => {
        const header = r.headers['x-ringlane-signature'] as string | undefined;
        verifiedBy.set(r, {
          standard: secrets.filter((s) => standardVerifies(s, r)),
          ringlane: secrets.filter((s) => verifyRinglaneSignature(r.raw, header, s)),
        });
        return { status: 200 };
      });
      await Promise.all([services.start('calls'), services.start('relay'), services.start('webhooks')]);
    });
    after(async function () {
      this.timeout(30_000);
      await services.stopAll();
      await receiver?.close();
    });

    /** Places a call and waits for its four deliveries; returns them with the secrets each verifies with. */
    async function deliveriesOfACall(org: VoiceOrg) {
      const call = await placeCall(org, { duration_seconds: 1 });
      const ofCall = () => receiver.received.filter((r) => r.body.call_id === call.id);
      await receiver
        .until(() => ofCall().length >= 4, 30_000)
        .catch((err) => {
          throw new Error(`${err.message}\n${services.tails()}`);
        });
      return ofCall().map((r) => ({ received: r, ...verifiedBy.get(r)! }));
    }

    const track = (...added: string[]) => {
      secrets.push(...added);
      return added;
    };

    it('signs with both secrets during the overlap (new first), with the new one only after it, after overlap 0 and after a PATCH', async () => {
      const org = await voiceOrg();
      const owner = asCaller(org.key);
      const [oldSecret, newOne, newer, immediate, patchedAway, patched] = track(newSecret(), newSecret(), newSecret(), newSecret(), newSecret(), newSecret());
      const endpoint = expectStatus(await owner.post(PATH, { name: 'Rotating', url: receiver.url, secret: oldSecret, outcomes: [] }), 201).body;

      // During a running overlap: a receiver with only the new secret and one with only the
      // old one both accept the same delivery; X-Ringlane-Signature is the new secret's.
      expectStatus(await owner.post(rotatePath(endpoint.id), { secret: newOne, overlap_seconds: 600 }), 200);
      const during = await deliveriesOfACall(org);
      for (const { received, standard, ringlane } of during) {
        expect(standard).to.have.members([newOne, oldSecret]);
        expect(ringlane).to.deep.equal([newOne]);
        const id = received.headers['webhook-id'] as string;
        const at = new Date(Number(received.headers['webhook-timestamp']) * 1000);
        expect(received.headers['webhook-signature']).to.equal(
          `${new Webhook(newOne).sign(id, at, received.raw)} ${new Webhook(oldSecret).sign(id, at, received.raw)}`,
        );
      }

      // A short overlap: once it is over, only the newest secret signs.
      const short = expectStatus(await owner.post(rotatePath(endpoint.id), { secret: newer, overlap_seconds: 2 }), 200).body;
      expect(short.secret_rotation).to.not.equal(null);
      await sleep(Math.max(0, Date.parse(short.secret_rotation.previous_expires_at) - Date.now()) + 100);
      expect(expectStatus(await owner.get(`${PATH}/${endpoint.id}`), 200).body.secret_rotation).to.equal(null);
      const after = await deliveriesOfACall(org);
      for (const { received, standard, ringlane } of after) {
        expect(standard).to.deep.equal([newer]);
        expect(ringlane).to.deep.equal([newer]);
        expect((received.headers['webhook-signature'] as string).split(' ')).to.have.lengthOf(1);
      }
      // An attempt is signed by the secrets valid when it is made: a delivery made during the
      // first overlap, sent again now, carries the newest secret's signature alone.
      const first = during[0].received.headers['webhook-id'] as string;
      const before = receiver.received.length;
      expectStatus(await owner.post(`/v1/webhook-deliveries/${first}/retry`, {}), 202);
      await receiver.until((all) => all.slice(before).some((r) => r.headers['webhook-id'] === first), 30_000);
      const resent = receiver.received.slice(before).find((r) => r.headers['webhook-id'] === first)!;
      expect(verifiedBy.get(resent)!.standard).to.deep.equal([newer]);

      // overlap_seconds 0: the old secret is refused at once.
      expect(expectStatus(await owner.post(rotatePath(endpoint.id), { secret: immediate, overlap_seconds: 0 }), 200).body.secret_rotation).to.equal(null);
      for (const { standard, ringlane } of await deliveriesOfACall(org)) {
        expect(standard).to.deep.equal([immediate]);
        expect(ringlane).to.deep.equal([immediate]);
      }

      // PATCH with a secret ends a running overlap.
      expectStatus(await owner.post(rotatePath(endpoint.id), { secret: patchedAway, overlap_seconds: 600 }), 200);
      expect(expectStatus(await owner.patch(`${PATH}/${endpoint.id}`, { secret: patched }), 200).body.secret_rotation).to.equal(null);
      for (const { standard, ringlane } of await deliveriesOfACall(org)) {
        expect(standard).to.deep.equal([patched]);
        expect(ringlane).to.deep.equal([patched]);
      }
    });
  });
});
