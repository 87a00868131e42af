import { expect } from 'chai';
import { db } from '../helpers/db.js';
import { asCaller, createOrg, expectError, expectStatus, type Caller, type TestOrg } from '../helpers/api.js';
import { behavesLikeAnOrgResource, expectInvalid, uniqueNumber } from '../helpers/org-resource.js';

const AGENT_FIELDS = ['id', 'name', 'kind', 'greeting', 'voice', 'prompt', 'created_at', 'updated_at'];

describe('agents (CONTRACT.md "Other areas": POST /v1/agents)', () => {
  behavesLikeAnOrgResource({
    path: '/v1/agents',
    resource: 'agent',
    idPrefix: 'agt',
    capability: 'operate',
    fields: AGENT_FIELDS,
    create: (n) => ({ name: `Agent ${n}`, kind: 'reception', greeting: `Hello ${n}`, voice: 'alloy', prompt: 'Be kind.' }),
    update: async () => ({ name: 'Renamed', prompt: 'Be brief.' }),
  });

  let org: TestOrg;
  let owner: Caller;
  before(async () => {
    org = await createOrg();
    owner = asCaller(org.key);
  });

  it('defaults kind to appointment and the texts to their defaults', async () => {
    const agent = expectStatus(await owner.post('/v1/agents', { name: 'Ava' }), 201).body;
    expect(agent).to.include({ name: 'Ava', kind: 'appointment', greeting: '', voice: 'default', prompt: '' });
  });

  it('accepts every kind', async () => {
    for (const kind of ['appointment', 'reception', 'reminder', 'survey', 'sales', 'support', 'other']) {
      expect(expectStatus(await owner.post('/v1/agents', { name: kind, kind }), 201).body.kind).to.equal(kind);
    }
  });

  describe('refuses bad input with 400 naming the field', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['a missing name', { kind: 'sales' }, 'name'],
      ['an empty name', { name: '  ' }, 'name'],
      ['a name that is not a string', { name: 42 }, 'name'],
      ['an unknown kind', { name: 'A', kind: 'wizard' }, 'kind'],
      ['a kind that is not a string', { name: 'A', kind: ['sales'] }, 'kind'],
      ['a greeting that is not a string', { name: 'A', greeting: { text: 'hi' } }, 'greeting'],
      ['a name too long', { name: 'x'.repeat(201) }, 'name'],
      ['an unknown field', { name: 'A', language: 'en' }, 'language'],
    ];
    for (const [what, body, path] of cases) {
      it(`on create: ${what}`, async () => {
        expectInvalid(await owner.post('/v1/agents', body), path);
      });
    }

    it('on update', async () => {
      const agent = expectStatus(await owner.post('/v1/agents', { name: 'Ava' }), 201).body;
      expectInvalid(await owner.patch(`/v1/agents/${agent.id}`, { kind: 'wizard' }), 'kind');
      expectInvalid(await owner.patch(`/v1/agents/${agent.id}`, { name: null }), 'name');
    });

    it('lists every allowed kind in the message', async () => {
      const error = expectInvalid(await owner.post('/v1/agents', { name: 'A', kind: 'wizard' }), 'kind');
      expect(error.message).to.include('appointment').and.include('support');
    });
  });

  describe('DELETE', () => {
    it('is 409 agent_in_use while a campaign uses the agent, and works once it is gone', async () => {
      const agent = expectStatus(await owner.post('/v1/agents', { name: 'Busy' }), 201).body;
      await db.query('INSERT INTO campaigns (id, org_id, name, agent_id) VALUES ($1, $2, $3, $4)', [`cmp_${agent.id}`, org.id, 'Spring', agent.id]);
      expectError(await owner.delete(`/v1/agents/${agent.id}`), 409, 'agent_in_use');
      expectStatus(await owner.get(`/v1/agents/${agent.id}`), 200);
      await db.query('DELETE FROM campaigns WHERE id = $1', [`cmp_${agent.id}`]);
      expectStatus(await owner.delete(`/v1/agents/${agent.id}`), 204);
    });

    it('leaves the numbers it answered without an agent', async () => {
      const agent = expectStatus(await owner.post('/v1/agents', { name: 'Leaving' }), 201).body;
      const number = expectStatus(await owner.post('/v1/phone-numbers', { phone_number: uniqueNumber(), agent_id: agent.id }), 201).body;
      expect(number.agent_id).to.equal(agent.id);
      expectStatus(await owner.delete(`/v1/agents/${agent.id}`), 204);
      expect(expectStatus(await owner.get(`/v1/phone-numbers/${number.id}`), 200).body.agent_id).to.equal(null);
    });
  });
});
