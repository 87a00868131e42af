import { expect } from 'chai';
import { AgentsRepository } from '../../src/agents/agents.repository.js';
import type { Actor } from '../../src/auth/actor.js';
import { db } from '../helpers/db.js';
import { SmsSenderService } from '../../src/messaging/sms-sender.service.js';
import { PhoneNumbersRepository } from '../../src/numbers/phone-numbers.repository.js';
import { PhoneNumbersService } from '../../src/numbers/phone-numbers.service.js';
import { OrganizationsRepository } from '../../src/orgs/organizations.repository.js';
import { asCaller, createOrg, expectError, expectStatus, type Caller, type TestOrg } from '../helpers/api.js';
import { behavesLikeAnOrgResource, expectInvalid, uniqueNumber } from '../helpers/org-resource.js';

async function newAgent(caller: Caller, name = 'Ava'): Promise<string> {
  return expectStatus(await caller.post('/v1/agents', { name }), 201).body.id;
}

describe('phone numbers (CONTRACT.md "Other areas": POST /v1/phone-numbers)', () => {
  behavesLikeAnOrgResource({
    path: '/v1/phone-numbers',
    resource: 'phone_number',
    idPrefix: 'pn',
    capability: 'settings',
    fields: ['id', 'phone_number', 'agent_id', 'created_at', 'updated_at'],
    create: () => ({ phone_number: uniqueNumber() }),
    update: async (caller) => ({ agent_id: await newAgent(caller) }),
  });

  let org: TestOrg;
  let owner: Caller;
  let stranger: Caller;
  before(async () => {
    org = await createOrg();
    owner = asCaller(org.key);
    stranger = asCaller((await createOrg()).key);
  });

  describe('provisioning from the simulated carrier', () => {
    it('picks a number when given nothing', async () => {
      const number = expectStatus(await owner.post('/v1/phone-numbers', {}), 201).body;
      expect(number.phone_number).to.match(/^\+1\d{10}$/);
      expect(number.agent_id).to.equal(null);
    });

    it('picks a number in the area code asked for', async () => {
      const number = expectStatus(await owner.post('/v1/phone-numbers', { area_code: '628' }), 201).body;
      expect(number.phone_number).to.match(/^\+1628\d{7}$/);
    });

    it('provisions exactly the number asked for, with its agent', async () => {
      const agentId = await newAgent(owner);
      const wanted = uniqueNumber();
      const number = expectStatus(await owner.post('/v1/phone-numbers', { phone_number: wanted, agent_id: agentId }), 201).body;
      expect(number).to.include({ phone_number: wanted, agent_id: agentId });
    });

    it('is 409 phone_number_taken for a number any organization already has', async () => {
      const wanted = uniqueNumber();
      expectStatus(await stranger.post('/v1/phone-numbers', { phone_number: wanted }), 201);
      expectError(await owner.post('/v1/phone-numbers', { phone_number: wanted }), 409, 'phone_number_taken');
      expectError(await stranger.post('/v1/phone-numbers', { phone_number: wanted }), 409, 'phone_number_taken');
      const [{ count }] = await db.query('SELECT count(*)::int AS count FROM phone_numbers WHERE phone_number = $1', [wanted]);
      expect(count).to.equal(1);
    });

    it('tries again when the number the carrier picked is taken', async () => {
      const taken = uniqueNumber();
      const free = uniqueNumber();
      expectStatus(await stranger.post('/v1/phone-numbers', { phone_number: taken }), 201);
      const picks = [taken, taken, free];
      const numbers = new PhoneNumbersRepository(db);
      const carriers = { ofOrg: async () => ({ provisionNumber: async () => picks.shift() ?? null }) };
      const service = new PhoneNumbersService(
        db,
        numbers,
        carriers,
        new SmsSenderService(db, numbers, new OrganizationsRepository(db)),
        new AgentsRepository(db),
      );
      const ref = { id: org.id, parentId: null, isReseller: false, disabled: false };
      const actor: Actor = {
        via: 'api_key',
        keyId: org.keyId,
        credentialId: org.keyId,
        memberId: org.memberId,
        capabilities: ['settings'],
        ownerOrg: ref,
        org: ref,
      };
      const number = await service.create(actor, { area_code: '415' });
      expect(number.phone_number).to.equal(free);
      expect(picks).to.deep.equal([]);
    });

    it('is 409 phone_number_taken once every number the carrier picked was taken', async () => {
      // Every number the simulator can pick in area code 000 is taken.
      const filler = await createOrg();
      await db.query(
        `INSERT INTO phone_numbers (id, org_id, phone_number)
         SELECT 'pn_fill' || g, $1, '+1000555' || lpad(g::text, 4, '0') FROM generate_series(0, 9999) g`,
        [filler.id],
      );
      try {
        expectError(await owner.post('/v1/phone-numbers', { area_code: '000' }), 409, 'phone_number_taken');
      } finally {
        await db.query(`DELETE FROM phone_numbers WHERE org_id = $1`, [filler.id]);
      }
    });

    it("is 404 agent_not_found for an unknown agent or another organization's", async () => {
      const theirs = await newAgent(stranger);
      for (const agentId of [theirs, 'agt_0000000000000000000000']) {
        const wanted = uniqueNumber();
        expectError(await owner.post('/v1/phone-numbers', { phone_number: wanted, agent_id: agentId }), 404, 'agent_not_found');
        const rows = await db.query('SELECT 1 FROM phone_numbers WHERE phone_number = $1', [wanted]);
        expect(rows, 'no number provisioned').to.have.lengthOf(0);
      }
    });

    const bad: [string, Record<string, unknown>, string][] = [
      ['an area code of 2 digits', { area_code: '41' }, 'area_code'],
      ['an area code of letters', { area_code: 'abc' }, 'area_code'],
      ['an area code that is a number', { area_code: 415 }, 'area_code'],
      ['a number without +', { phone_number: '4155550123' }, 'phone_number'],
      ['a number with spaces', { phone_number: '+1 415 555 0123' }, 'phone_number'],
      ['a number too long', { phone_number: '+1234567890123456' }, 'phone_number'],
      ['an agent id that is not a string', { agent_id: 7 }, 'agent_id'],
      ['an unknown field', { country: 'US' }, 'country'],
    ];
    for (const [what, body, path] of bad) {
      it(`is 400 for ${what}, naming ${path}`, async () => {
        expectInvalid(await owner.post('/v1/phone-numbers', body), path);
      });
    }

    it('is 400 for both an area code and a number', async () => {
      const error = expectError(await owner.post('/v1/phone-numbers', { area_code: '415', phone_number: uniqueNumber() }), 400, 'invalid_request');
      expect(error.message).to.include('area_code').and.include('phone_number');
    });
  });

  describe('PATCH agent_id', () => {
    it('sets and clears the agent answering the number', async () => {
      const agentId = await newAgent(owner);
      const number = expectStatus(await owner.post('/v1/phone-numbers', { phone_number: uniqueNumber() }), 201).body;
      expect(expectStatus(await owner.patch(`/v1/phone-numbers/${number.id}`, { agent_id: agentId }), 200).body.agent_id).to.equal(agentId);
      const cleared = expectStatus(await owner.patch(`/v1/phone-numbers/${number.id}`, { agent_id: null }), 200).body;
      expect(cleared).to.include({ agent_id: null, phone_number: number.phone_number });
    });

    it("is 404 agent_not_found for another organization's agent, and changes nothing", async () => {
      const mine = await newAgent(owner);
      const number = expectStatus(await owner.post('/v1/phone-numbers', { phone_number: uniqueNumber(), agent_id: mine }), 201).body;
      expectError(await owner.patch(`/v1/phone-numbers/${number.id}`, { agent_id: await newAgent(stranger) }), 404, 'agent_not_found');
      expect(expectStatus(await owner.get(`/v1/phone-numbers/${number.id}`), 200).body.agent_id).to.equal(mine);
    });

    it('is 400 without agent_id, or with anything else', async () => {
      const number = expectStatus(await owner.post('/v1/phone-numbers', {}), 201).body;
      expectInvalid(await owner.patch(`/v1/phone-numbers/${number.id}`, {}), 'agent_id');
      expectInvalid(await owner.patch(`/v1/phone-numbers/${number.id}`, { agent_id: null, phone_number: uniqueNumber() }), 'phone_number');
    });
  });

  describe('DELETE', () => {
    it('releases the number: it can be provisioned again', async () => {
      const wanted = uniqueNumber();
      const number = expectStatus(await owner.post('/v1/phone-numbers', { phone_number: wanted }), 201).body;
      expectStatus(await owner.delete(`/v1/phone-numbers/${number.id}`), 204);
      expectStatus(await stranger.post('/v1/phone-numbers', { phone_number: wanted }), 201);
    });

    it('clears the texting sender when it was that number, and only then', async () => {
      const fresh = asCaller((await createOrg()).key);
      const sender = expectStatus(await fresh.post('/v1/phone-numbers', { phone_number: uniqueNumber() }), 201).body;
      const spare = expectStatus(await fresh.post('/v1/phone-numbers', { phone_number: uniqueNumber() }), 201).body;
      expectStatus(await fresh.put('/v1/sms-sender', { phone_number: sender.phone_number }), 200);
      expectStatus(await fresh.delete(`/v1/phone-numbers/${spare.id}`), 204);
      expect(expectStatus(await fresh.get('/v1/sms-sender'), 200).body).to.deep.equal({ phone_number: sender.phone_number });
      expectStatus(await fresh.delete(`/v1/phone-numbers/${sender.id}`), 204);
      expect(expectStatus(await fresh.get('/v1/sms-sender'), 200).body).to.deep.equal({ phone_number: null });
    });
  });
});
