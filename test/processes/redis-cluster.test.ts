// On a Redis Cluster (the cluster pass, `npm run test:cluster`): every process kind under load,
// and where their keys went. A key's slot is the cluster's own answer (CLUSTER KEYSLOT), a
// master's keys what SCAN finds on it. The busy run has a key namespace of its own, so that
// the counts are its keys alone.
import type { Cluster } from 'ioredis';
import { expect } from 'chai';
import { config } from '../../src/config.js';
import { QUEUES } from '../../src/jobs.js';
import { mastersOf, scanKeys, tagOf } from '../../src/lib/redis.js';
import { uniqueEmail } from '../helpers/api.js';
import { freePort, ServiceProcesses, SERVICES, waitUntil, type ServiceKind } from '../helpers/processes.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { deleteKeys, redisForTests } from '../helpers/redis.js';
import { placeCallThrough, voiceOrg, type VoiceOrg } from '../helpers/voice.js';

const ORGS = 8;
const CALLS_PER_ORG = 5;

describe('Redis Cluster: the keys of a busy run', function () {
  this.timeout(120_000);
  const services = new ServiceProcesses();
  let receiver: Receiver;
  const namespace = `${config.redisPrefix}:busy`;

  before(function () {
    if (config.redis.mode !== 'cluster') {
      console.log('      (skipped: runs in the cluster pass, npm run test:cluster, against a Redis Cluster)');
      this.skip();
    }
  });

  after(async function () {
    this.timeout(60_000);
    await services.stopAll();
    await receiver?.close();
    if (config.redis.mode === 'cluster') await deleteKeys(redisForTests(), `${namespace}:*`);
  });

  it('every queue, each organization, the sign-in limits and the metrics are in one slot each, and they spread over the masters', async () => {
    const cluster = redisForTests() as Cluster;
    receiver = await startReceiver();
    const port = await freePort();
    const kinds = Object.keys(SERVICES) as ServiceKind[];
    await Promise.all(kinds.map((kind) => services.start(kind, { REDIS_PREFIX: namespace, ...(kind === 'web' ? { PORT: String(port) } : {}) })));
    const api = (token: string | null, method: string, path: string, body?: unknown) =>
      fetch(`http://127.0.0.1:${port}${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });

    // Keys come and go (a call waits, then holds a slot): what SCAN sees while the run goes on.
    const seen = new Set<string>();
    const look = async () => (await scanKeys(cluster, `${namespace}:*`)).forEach((key) => seen.add(key));
    let looking = true;
    const sampler = (async () => {
      while (looking) await Promise.all([look(), new Promise((r) => setTimeout(r, 100))]);
    })();

    const orgs: VoiceOrg[] = [];
    for (let i = 0; i < ORGS; i++) orgs.push(await voiceOrg({ fields: { ceiling: { max_concurrent_calls: 2, max_calls_per_hour: 1000 } } }));
    const email = uniqueEmail('busy');
    const callIds: string[] = [];
    await Promise.all(
      orgs.map(async (org) => {
        expect(
          (await api(org.key, 'POST', '/v1/webhook-endpoints', { name: 'Busy', url: receiver.url, secret: 'a-secret-value', outcomes: [] })).status,
        ).to.equal(201);
        // The key creation limit (a Lua script, per organization), then a revocation (the auth epoch).
        const created = await api(org.key, 'POST', '/v1/api-keys', { label: 'busy', permissions: ['operate'] });
        expect(created.status).to.equal(201);
        expect((await api(org.key, 'DELETE', `/v1/api-keys/${(await created.json()).key_id}`)).status).to.equal(204);
        // The sign-in limits (one Lua script over the per-email and the per-address limit).
        expect((await api(null, 'POST', '/v1/sessions', { email, password: 'not the password' })).status).to.equal(401);
        for (let c = 0; c < CALLS_PER_ORG; c++) callIds.push(await placeCallThrough(port, org, { duration_seconds: 500 }));
      }),
    );
    const completedDelivered = () => new Set(receiver.received.filter((r) => r.body.event === 'call.completed').map((r) => r.body.call_id));
    await waitUntil(
      'every call completed and its call.completed delivered',
      async () => callIds.every((id) => completedDelivered().has(id)),
      60_000,
      () => services.tails(),
    );
    // The webhooks worker adds its metrics to Redis once a second.
    await waitUntil(
      'the metrics are in Redis',
      async () => (await scanKeys(cluster, `${namespace}:metrics:*`)).length === 2,
      10_000,
      () => [...seen],
    );
    looking = false;
    await sampler;
    await look();

    const slotOf = new Map<string, number>();
    await Promise.all([...seen].map(async (key) => slotOf.set(key, Number(await cluster.cluster('KEYSLOT', key)))));
    const slotsOf = (keys: string[]) => new Set(keys.map((key) => slotOf.get(key)));
    // A key without the namespace and with its hash tag blanked: `calls:{}:waiting`.
    const shape = (key: string) => key.slice(namespace.length + 1).replace(/\{[^}]*\}/, '{}');
    const keysWhere = (test: (key: string) => boolean) => [...seen].filter(test);

    // An organization's calls (waiting, holding a slot, started in the hour: the admission
    // script, and the transaction that frees a slot) and its key creation limit: one slot. (The
    // requested dispatches, tag `dispatch`, live for moments: their transactions, refused across
    // slots, are how every call here got dialed.)
    for (const org of orgs) {
      const keys = keysWhere((key) => key.includes(org.id));
      expect(keys.map(shape), org.id).to.include.members(['calls:{}:waiting', 'calls:{}:active', 'calls:{}:starts', `ratelimit:{}:api-key-create:${org.id}`]);
      expect(slotsOf(keys).size, keys.join('\n')).to.equal(1);
    }
    // The sign-in limits: one script takes a slot of the per-email and the per-address limit.
    const signIn = keysWhere((key) => shape(key).startsWith('ratelimit:{}:signin-'));
    expect(signIn.map(shape)).to.have.members([`ratelimit:{}:signin-failed-email:${email}`, 'ratelimit:{}:signin-failed-address:127.0.0.1']);
    expect(slotsOf(signIn).size, signIn.join('\n')).to.equal(1);
    // The metrics: one transaction adds to both.
    const metrics = keysWhere((key) => shape(key).startsWith('metrics:'));
    expect(metrics.map(shape)).to.have.members(['metrics:{}:attempts', 'metrics:{}:latency']);
    expect(slotsOf(metrics).size).to.equal(1);
    expect(keysWhere((key) => shape(key) === 'auth:{}')).to.have.lengthOf(1);

    // Every queue's keys (BullMQ's scripts use many at once): one slot per queue, a different one each.
    const queueSlots = new Set<number | undefined>();
    for (const queue of Object.keys(QUEUES)) {
      const keys = keysWhere((key) => shape(key).startsWith(`queue:{}:${queue}:`));
      expect(keys, queue).to.not.be.empty;
      expect(slotsOf(keys).size, keys.join('\n')).to.equal(1);
      queueSlots.add(slotOf.get(keys[0]));
    }
    expect(queueSlots.size).to.equal(Object.keys(QUEUES).length);

    // Where the run's keys are now, per master, and of what kind (`queue:calls`, `calls`: an organization's calls, ...).
    const perMaster = await Promise.all(
      mastersOf(cluster).map(async (node) => {
        const keys = await scanKeys(node, `${namespace}:*`);
        const kinds = new Map<string, number>();
        for (const key of keys) {
          const kind = shape(key).startsWith('queue:') ? `queue:${tagOf(key)}` : shape(key).split(':')[0];
          kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
        }
        return {
          master: `${node.options.host}:${node.options.port}`,
          keys: keys.length,
          kinds: [...kinds]
            .sort()
            .map(([kind, n]) => `${kind} ${n}`)
            .join(', '),
        };
      }),
    );
    console.log(`      keys of the busy run per master (${seen.size} distinct keys seen during the run):`);
    for (const m of perMaster) console.log(`        ${m.master}: ${m.keys} (${m.kinds})`);
    expect(perMaster).to.have.lengthOf(3);
    expect(perMaster.filter((m) => m.keys > 0).length, JSON.stringify(perMaster)).to.be.above(1);
  });
});
