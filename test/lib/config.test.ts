import { expect } from 'chai';
import { DEFAULT_DATABASE_URL, loadConfig } from '../../src/config.js';

describe('config', () => {
  it('applies the CONTRACT.md defaults', () => {
    const c = loadConfig({});
    expect(c.port).to.equal(3000);
    expect(c.databaseUrl).to.equal(DEFAULT_DATABASE_URL);
    expect(c.databaseUrlExplicit).to.equal(false);
    expect(c.redis).to.deep.equal({ mode: 'server', url: 'redis://127.0.0.1:6379' });
    expect(c.redisPrefix).to.equal('ringlane');
    expect(c.operatorToken).to.equal(null);
    expect(c.webhook).to.deep.equal({
      maxAttempts: 12,
      backoffBaseMs: 30000,
      timeoutMs: 10000,
      disableAfterHours: 120,
      retentionDays: 30,
      allowPrivateNetworks: true,
    });
    expect(c.sim).to.deep.equal({ ringMs: 1000, secondMs: 1000 });
    expect(c.eventRetentionDays).to.equal(30);
  });

  it('EVENT_RETENTION_DAYS: 30 unless set, a number of days from 0', () => {
    expect(loadConfig({ EVENT_RETENTION_DAYS: '90' }).eventRetentionDays).to.equal(90);
    expect(loadConfig({ EVENT_RETENTION_DAYS: '0.5' }).eventRetentionDays).to.equal(0.5);
    for (const value of ['-1', 'forever', '']) expect(() => loadConfig({ EVENT_RETENTION_DAYS: value }), value).to.throw(/EVENT_RETENTION_DAYS/);
  });

  it('DATABASE_REPLICA_URL: no replica unless set (set empty: none); DATABASE_REPLICA_MAX_LAG_MS 1000 unless set', () => {
    expect(loadConfig({}).replica).to.equal(null);
    expect(loadConfig({ DATABASE_REPLICA_URL: '' }).replica).to.equal(null);
    const url = 'postgres://reader@10.0.0.7:5432/ringlane';
    expect(loadConfig({ DATABASE_REPLICA_URL: url }).replica).to.deep.equal({ url, maxLagMs: 1000 });
    expect(loadConfig({ DATABASE_REPLICA_URL: url, DATABASE_REPLICA_MAX_LAG_MS: '250' }).replica).to.deep.equal({ url, maxLagMs: 250 });
    expect(() => loadConfig({ DATABASE_REPLICA_URL: 'redis://10.0.0.7:6379' })).to.throw(/DATABASE_REPLICA_URL/);
    for (const value of ['-1', '1.5', 'soon']) expect(() => loadConfig({ DATABASE_REPLICA_MAX_LAG_MS: value }), value).to.throw(/DATABASE_REPLICA_MAX_LAG_MS/);
  });

  it('refuses private webhook networks by default in production only', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).webhook.allowPrivateNetworks).to.equal(false);
    expect(loadConfig({ NODE_ENV: 'production', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }).webhook.allowPrivateNetworks).to.equal(true);
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' }).webhook.allowPrivateNetworks).to.equal(false);
  });

  it('trusts no proxy by default; TRUST_PROXY takes true, false or a hop count', () => {
    expect(loadConfig({}).trustProxy).to.equal(false);
    for (const [value, expected] of [
      ['true', true],
      ['false', false],
      ['1', 1],
      ['2', 2],
    ] as const) {
      expect(loadConfig({ TRUST_PROXY: value }).trustProxy, value).to.equal(expected);
    }
    for (const value of ['yes', '-1', '1.5', '']) expect(() => loadConfig({ TRUST_PROXY: value }), value).to.throw(/TRUST_PROXY/);
  });

  it('INTAKE_NICE: 0 unless set, 0 to 19', () => {
    expect(loadConfig({}).intakeNice).to.equal(0);
    expect(loadConfig({ INTAKE_NICE: '19' }).intakeNice).to.equal(19);
    for (const value of ['-1', '20', '5.5', 'low']) expect(() => loadConfig({ INTAKE_NICE: value }), value).to.throw(/INTAKE_NICE/);
  });

  it('reads the environment', () => {
    const c = loadConfig({ PORT: '8080', DATABASE_URL: 'postgres://u@db:5432/x', OPERATOR_TOKEN: 'a-long-operator-token', SIM_SECOND_MS: '5' });
    expect(c.port).to.equal(8080);
    expect(c.databaseUrl).to.equal('postgres://u@db:5432/x');
    expect(c.databaseUrlExplicit).to.equal(true);
    expect(c.operatorToken).to.equal('a-long-operator-token');
    expect(c.sim.secondMs).to.equal(5);
  });

  it('DATABASE_DIRECT_URL: unset (or empty), DATABASE_URL serves for everything; set, DATABASE_URL is a transaction pooler', () => {
    const plain = loadConfig({ DATABASE_URL: 'postgres://u@db:5432/x' });
    expect([plain.databaseDirectUrl, plain.databasePooled]).to.deep.equal(['postgres://u@db:5432/x', false]);
    expect(loadConfig({}).databaseDirectUrl).to.equal(DEFAULT_DATABASE_URL);
    const empty = loadConfig({ DATABASE_URL: 'postgres://u@db:5432/x', DATABASE_DIRECT_URL: '' });
    expect([empty.databaseDirectUrl, empty.databasePooled]).to.deep.equal(['postgres://u@db:5432/x', false]);
    const pooled = loadConfig({ DATABASE_URL: 'postgres://u@bouncer:6432/x', DATABASE_DIRECT_URL: 'postgres://u@db:5432/x' });
    expect([pooled.databaseUrl, pooled.databaseDirectUrl, pooled.databasePooled]).to.deep.equal([
      'postgres://u@bouncer:6432/x',
      'postgres://u@db:5432/x',
      true,
    ]);
    expect(() => loadConfig({ DATABASE_DIRECT_URL: 'mysql://db/x' })).to.throw(/DATABASE_DIRECT_URL/);
  });

  it('names every bad variable at once', () => {
    expect(() => loadConfig({ PORT: 'abc', REDIS_URL: 'http://x', WEBHOOK_MAX_ATTEMPTS: '0', REDIS_PREFIX: '{tagged}' }))
      .to.throw(Error)
      .with.property('message')
      .that.matches(/PORT/)
      .and.matches(/REDIS_URL/)
      .and.matches(/WEBHOOK_MAX_ATTEMPTS/)
      .and.matches(/REDIS_PREFIX/);
  });

  it('REDIS_CLUSTER_NODES: host:port seeds make every connection a cluster one; unset or empty, REDIS_URL is used', () => {
    expect(loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.5:6379, redis-2.internal:7000,[fd00::7]:6380', REDIS_URL: 'redis://other:6379' }).redis).to.deep.equal({
      mode: 'cluster',
      nodes: [
        { host: '10.0.0.5', port: 6379 },
        { host: 'redis-2.internal', port: 7000 },
        { host: 'fd00::7', port: 6380 },
      ],
    });
    expect(loadConfig({ REDIS_CLUSTER_NODES: '', REDIS_URL: 'redis://other:6379' }).redis).to.deep.equal({ mode: 'server', url: 'redis://other:6379' });
    for (const value of ['10.0.0.5', 'redis://10.0.0.5:6379', '10.0.0.5:6379,', 'fd00::7:6379', 'host:0', 'host:65536', 'a b:1']) {
      expect(() => loadConfig({ REDIS_CLUSTER_NODES: value }), value).to.throw(/REDIS_CLUSTER_NODES/);
    }
  });

  it('REDIS_PREFIX: a plain namespace, no hash tag', () => {
    expect(loadConfig({ REDIS_PREFIX: 'acme:ringlane' }).redisPrefix).to.equal('acme:ringlane');
    for (const value of ['{ringlane}', 'ring lane', ':ringlane', 'ringlane:', 'ring*'])
      expect(() => loadConfig({ REDIS_PREFIX: value }), value).to.throw(/REDIS_PREFIX/);
  });

  it('WEB_CONCURRENCY: 1 unless set (no cluster), an integer from 1 to 64', () => {
    expect(loadConfig({}).webConcurrency).to.equal(1);
    expect(loadConfig({ WEB_CONCURRENCY: '4' }).webConcurrency).to.equal(4);
    expect(loadConfig({ WEB_CONCURRENCY: '64' }).webConcurrency).to.equal(64);
    for (const value of ['0', '65', '2.5', 'many', '']) expect(() => loadConfig({ WEB_CONCURRENCY: value }), value).to.throw(/WEB_CONCURRENCY/);
  });

  it('returns frozen settings', () => {
    expect(Object.isFrozen(loadConfig({}))).to.equal(true);
  });
});
