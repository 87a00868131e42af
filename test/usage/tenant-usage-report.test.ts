// CONTRACT.md §5 "Usage of every tenant": GET /v1/tenant-usage, paged JSON or all of it as CSV,
// each row exactly the tenant's own usage (GET /v1/tenants/{id}/usage) for the same window.
import { createServer, get as httpGet, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { parse } from 'csv-parse/sync';
import pg from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { PostgresDataSourceOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions.js';
import { CsvFile } from '../../src/lib/csv.js';
import { chargeForSeconds, formatMoney, parseMoney } from '../../src/lib/money.js';
import { UsageRollup } from '../../src/usage/usage-rollup.js';
import { UsageRepository } from '../../src/usage/usage.repository.js';
import { CSV_PAGE_SIZE, UsageService } from '../../src/usage/usage.service.js';
import { startOfNextUtcMonth, startOfUtcMonth } from '../../src/usage/usage-window.js';
import { app, appOver, asCaller, bearer, createOrg, expectError, expectStatus, keyWith, walkList } from '../helpers/api.js';
import { db } from '../helpers/db.js';
import { expectInvalid } from '../helpers/org-resource.js';
import { StatementLog } from '../helpers/statements.js';
import { createTenant, reseller, type Reseller } from '../helpers/tenants.js';
import { uniquePhone, waitForCalls, withCallsWorker } from '../helpers/voice.js';

const CSV_HEADER = [
  'tenant_id',
  'name',
  'external_ref',
  'disabled',
  'since',
  'until',
  'completed_calls',
  'talk_time_seconds',
  'currency',
  'charges_calls',
  'charges_other',
  'charges_total',
  'billable_calls',
  'billable_other',
  'billable_total',
];
type CsvArgs = Parameters<UsageService['usageOfTenantsCsv']>;
/** A JSON row's fields: the CSV's columns, its amounts as two objects. */
const ROW_FIELDS = [...CSV_HEADER.slice(0, 9), 'charges', 'billable'];
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** What the priced tenant's two calls (7 s and 61 s) cost the reseller at 0.600001 per minute, per started second. */
const PRICED_CALLS = formatMoney(chargeForSeconds(7, 600_001n) + chargeForSeconds(61, 600_001n));
/** A tenant name that needs every rule of RFC 4180 quoting. */
const AWKWARD_NAME = 'Smith, "Jr." &\nSons =1+1';

let counter = 0;
/** Tenants of `owner` written straight to the table (the tenant endpoints are not under test here), with these id suffixes. */
async function insertTenants(owner: Reseller, suffixes: string[]): Promise<string[]> {
  const ids = suffixes.map((suffix) => `ten_${suffix}${process.pid}x${counter++}`);
  await db.query(`INSERT INTO organizations (id, name, parent_id, currency) SELECT id, 'Seeded ' || id, $2, 'USD' FROM unnest($1::varchar[]) AS id`, [
    ids,
    owner.id,
  ]);
  return ids;
}
/** `count` tenants of `owner` written straight to the table. */
const insertManyTenants = (owner: Reseller, count: number) =>
  insertTenants(
    owner,
    Array.from({ length: count }, (_, i) => `m${i}`),
  );

const windowQuery = (since: Date, until: Date) => `since=${since.toISOString()}&until=${until.toISOString()}`;

/** The report as CSV: the response, and its text. */
async function csvOf(key: string, query = '', target?: Parameters<typeof request>[0]) {
  const res = await request(target ?? (await app()))
    .get(`/v1/tenant-usage${query ? `?${query}` : ''}`)
    .set('Authorization', bearer(key))
    .set('Accept', 'text/csv')
    .buffer(true)
    .parse((response, done) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      // Errors are JSON, whatever was asked for.
      response.on('end', () => done(null, /json/.test(String(response.headers['content-type'])) ? JSON.parse(text) : text));
    });
  return { res, text: res.body as string };
}

/** Parses the CSV as RFC 4180 says (CRLF record ends only); returns the records after the header, which it checks. */
function parseCsv(text: string): string[][] {
  expect(text.endsWith('\r\n'), 'the last record ends with CRLF').to.equal(true);
  const records: string[][] = parse(text, { record_delimiter: '\r\n', relax_quotes: false });
  expect(records[0]).to.deep.equal(CSV_HEADER);
  return records.slice(1);
}

/** A JSON row as its CSV record holds it. */
const asRecord = (row: any): string[] => [
  row.tenant_id,
  row.name,
  row.external_ref ?? '',
  String(row.disabled),
  row.since,
  row.until,
  String(row.completed_calls),
  String(row.talk_time_seconds),
  row.currency,
  row.charges.calls,
  row.charges.other,
  row.charges.total,
  row.billable.calls,
  row.billable.other,
  row.billable.total,
];

/** Every row of the report (`query` the window), walking its pages. */
const report = async (owner: Reseller, query = '', limit = 100) => (await walkList(owner.as, `/v1/tenant-usage${query ? `?${query}` : ''}`, limit)).items;

describe('usage of every tenant: GET /v1/tenant-usage (CONTRACT.md §5)', () => {
  describe('with calls charged by a running calls worker', function () {
    this.timeout(90_000);
    withCallsWorker();

    const rollup = new UsageRollup(new UsageRepository(db));
    let owner: Reseller;
    let stranger: Reseller;
    let since: Date;
    const tenants: Record<'priced' | 'plain' | 'idle' | 'awkward', any> = {} as any;

    before(async () => {
      since = new Date(Date.now() - 10 * 60_000 - 17);
      owner = await reseller({ balance: '100.000000', rates: { per_minute: '0.600001', per_text: '0.050000' } });
      // The reseller texts confirmations from its number: each positive call's text is charged and billed.
      const number = expectStatus(await owner.as.post('/v1/phone-numbers', {}), 201).body.phone_number;
      expectStatus(await owner.as.put('/v1/sms-sender', { phone_number: number }), 200);
      tenants.priced = await createTenant(owner, { name: 'Priced', external_ref: 'crm-1' });
      tenants.plain = await createTenant(owner, { name: 'Plain' });
      tenants.idle = await createTenant(owner, { name: 'Idle', external_ref: 'crm-3' });
      tenants.awkward = await createTenant(owner, { name: AWKWARD_NAME, external_ref: '=HYPERLINK("x")' });
      expectStatus(await owner.as.put(`/v1/tenants/${tenants.priced.id}/prices`, { per_minute: '0.200000', per_text: '0.020000' }), 200);
      const placed: Array<[string, string]> = [];
      const place = async (tenantId: string, simulate: Record<string, unknown>) => {
        const inside = owner.inside(tenantId);
        const [agent] = expectStatus(await inside.get('/v1/agents'), 200).body.data;
        const contact = expectStatus(await inside.post('/v1/contacts', { name: 'Cleo', phone_number: uniquePhone() }), 201).body;
        placed.push([tenantId, expectStatus(await inside.post('/v1/calls', { agent_id: agent.id, contact_id: contact.id, simulate }), 201).body.id]);
      };
      await place(tenants.priced.id, { duration_seconds: 7, outcome: 'positive' });
      await place(tenants.priced.id, { duration_seconds: 61, outcome: 'neutral' });
      await place(tenants.plain.id, { duration_seconds: 13, outcome: 'positive' });
      await place(tenants.awkward.id, { duration_seconds: 3, outcome: 'neutral' });
      for (const [tenantId, callId] of placed) await waitForCalls(owner, [callId], 30_000, { 'X-Tenant-Id': tenantId });
      expectStatus(await owner.as.patch(`/v1/tenants/${tenants.idle.id}`, { disabled: true }), 200);

      // Another reseller, with activity of its own tenant's: never in the first one's report.
      stranger = await reseller();
      await createTenant(stranger, { name: 'Stranger' });
    });
    after(async () => {
      // The rollup below ran ahead of the clock: later tests start from no watermark, as usage.test.ts's do.
      await db.query('DELETE FROM usage_watermark');
    });

    /** Asserts each row of the report equals the tenant's own usage for the same query, and its tenant fields the tenant's. */
    async function expectRowsAreTenantUsage(query: string): Promise<any[]> {
      const rows = await report(owner, query);
      expect(rows.map((r) => r.tenant_id)).to.deep.equal(
        Object.values(tenants)
          .map((t) => t.id)
          .sort(),
      );
      for (const row of rows) {
        expect(row).to.have.all.keys(...ROW_FIELDS);
        const { name, external_ref, disabled, ...usage } = row;
        expect(usage, name).to.deep.equal(expectStatus(await owner.as.get(`/v1/tenants/${row.tenant_id}/usage${query ? `?${query}` : ''}`), 200).body);
        const tenant = expectStatus(await owner.as.get(`/v1/tenants/${row.tenant_id}`), 200).body;
        expect({ name, external_ref, disabled }).to.deep.equal({ name: tenant.name, external_ref: tenant.external_ref, disabled: tenant.disabled });
      }
      return rows;
    }

    it('has one row per tenant, disabled ones included, each exactly GET /v1/tenants/{id}/usage for the same window (charges, resale billable, texts)', async () => {
      const until = new Date(Date.now() + HOUR + 29);
      const rows = await expectRowsAreTenantUsage(windowQuery(since, until));
      const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
      // Not vacuous: the figures the calls and texts made.
      expect(byName.Priced).to.deep.include({ completed_calls: 2, talk_time_seconds: 68, currency: 'USD', external_ref: 'crm-1', disabled: false });
      expect(byName.Priced.charges).to.deep.equal({ calls: PRICED_CALLS, other: '0.050000', total: formatMoney(parseMoney(PRICED_CALLS)! + 50_000n) });
      expect(byName.Priced.billable).to.deep.equal({ calls: '0.226668', other: '0.020000', total: '0.246668' });
      expect(byName.Plain.billable).to.deep.equal(byName.Plain.charges);
      expect(byName.Plain.charges.other).to.equal('0.050000');
      expect(byName.Idle).to.deep.include({ disabled: true, completed_calls: 0, external_ref: 'crm-3' });
      expect(byName.Idle.charges.total).to.equal('0.000000');
      expect(byName[AWKWARD_NAME].completed_calls).to.equal(1);
    });

    it('is the same with the default window (the current UTC month) and after the rollup (buckets plus the raw edges)', async () => {
      const rows = await expectRowsAreTenantUsage('');
      expect(rows[0]).to.include({ since: startOfUtcMonth(new Date()).toISOString(), until: startOfNextUtcMonth(new Date()).toISOString() });
      // Rolled up through the hour ahead, so the calls' hours come from buckets; the window starts and ends mid-hour.
      const query = windowQuery(since, new Date(Date.now() + HOUR + 29));
      const before = await report(owner, query);
      await rollup.run(new Date(Date.now() + 2 * HOUR));
      expect(await expectRowsAreTenantUsage(query)).to.deep.equal(before);
      expect(before.find((r) => r.name === 'Priced').charges.calls).to.equal(PRICED_CALLS);
    });

    /** ISO 8601 basic form, milliseconds kept unless zero. */
    const basic = (at: Date) => at.toISOString().replace(/[-:]/g, '').replace('.000Z', 'Z');

    it('as CSV: every row at once, RFC 4180, the same values as the JSON rows, as an attachment named by the window', async () => {
      const query = 'since=2026-11-01T00:00:00Z&until=2026-12-01T00:00:00Z';
      const { res, text } = await csvOf(owner.key, query);
      expectStatus(res, 200);
      expect(res.headers['content-type']).to.match(/^text\/csv\b/);
      expect(res.headers['content-disposition']).to.equal('attachment; filename="tenant-usage-20261101T000000Z-20261201T000000Z.csv"');
      expect(res.headers.vary).to.match(/\bAccept\b/);
      const records = parseCsv(text);
      expect(records).to.deep.equal((await report(owner, query)).map(asRecord));
      const awkward = records.find((r) => r[0] === tenants.awkward.id)!;
      // The name came back whole through the quoting; the formula-like reference is not altered.
      expect(awkward.slice(1, 3)).to.deep.equal([AWKWARD_NAME, '=HYPERLINK("x")']);
      expect(text).to.contain(`"Smith, ""Jr."" &\nSons =1+1"`);
      expect(records.find((r) => r[0] === tenants.plain.id)![2]).to.equal('');
      expect(records.find((r) => r[0] === tenants.idle.id)![3]).to.equal('true');

      const current = await csvOf(owner.key, windowQuery(since, new Date(since.getTime() + DAY + 500)));
      expect(current.res.headers['content-disposition']).to.equal(
        `attachment; filename="tenant-usage-${basic(since)}-${basic(new Date(since.getTime() + DAY + 500))}.csv"`,
      );
      const amounts = parseCsv(current.text).find((r) => r[0] === tenants.priced.id)!;
      expect(amounts.slice(9)).to.deep.equal([PRICED_CALLS, '0.050000', formatMoney(parseMoney(PRICED_CALLS)! + 50_000n), '0.226668', '0.020000', '0.246668']);
      expect(parseCsv((await csvOf(owner.key)).text)).to.deep.equal((await report(owner)).map(asRecord));
    });

    it("never shows another reseller's tenants", async () => {
      const mine = (await report(owner)).map((r) => r.tenant_id);
      const theirs = (await report(stranger)).map((r) => r.tenant_id);
      expect(theirs).to.have.lengthOf(1);
      expect(mine.filter((id) => theirs.includes(id))).to.deep.equal([]);
      expect(parseCsv((await csvOf(stranger.key)).text).map((r) => r[0])).to.deep.equal(theirs);
    });
  });

  describe('pages', () => {
    it('in ascending byte order of tenant id, with limit and cursor, each tenant once; a cursor that names no id is 400', async () => {
      const owner = await reseller();
      await createTenant(owner);
      await createTenant(owner);
      // Where byte order and a language's collation disagree: '-' < '0' < 'A' < 'Z' < '_' < 'a' in bytes.
      await insertTenants(owner, ['a', 'A', '_', 'Z', '0', '-', 'b', 'B']);
      const all = (await walkList(owner.as, '/v1/tenant-usage', 100)).items.map((r) => r.tenant_id);
      expect(all).to.have.lengthOf(10);
      expect(all).to.deep.equal([...all].sort());
      const { pages, items } = await walkList(owner.as, '/v1/tenant-usage', 3);
      expect(pages.map((p) => p.data.length)).to.deep.equal([3, 3, 3, 1]);
      expect(items.map((r) => r.tenant_id)).to.deep.equal(all);
      expect(parseCsv((await csvOf(owner.key)).text).map((r) => r[0])).to.deep.equal(all);
      for (const cursor of [
        'nonsense!',
        Buffer.from('a b').toString('base64url'),
        Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000Z', 'x'])).toString('base64url'),
      ]) {
        expectInvalid(await owner.as.get(`/v1/tenant-usage?cursor=${encodeURIComponent(cursor)}`), 'cursor');
      }
    });

    it('a reseller without tenants: an empty list, a CSV of its header alone', async () => {
      const owner = await reseller();
      expect(expectStatus(await owner.as.get('/v1/tenant-usage'), 200).body).to.deep.equal({ data: [], next_cursor: null });
      expect((await csvOf(owner.key)).text).to.equal(`${CSV_HEADER.join(',')}\r\n`);
    });
  });

  describe('cost: one statement per page, over a year', function () {
    this.timeout(60_000);
    const log = new StatementLog();
    let dataSource: DataSource;
    let ringlane: ReturnType<typeof appOver>;
    let owner: Reseller;
    const TENANTS = 2 * CSV_PAGE_SIZE + 30;

    before(async () => {
      owner = await reseller();
      await insertManyTenants(owner, TENANTS);
      // A watermark, so that a year's window is buckets and two raw edges.
      await new UsageRollup(new UsageRepository(db)).run(new Date());
      dataSource = await log.dataSource();
      ringlane = appOver({ db: dataSource });
    });
    after(async () => {
      log.restore();
      await ringlane.close();
      await dataSource.destroy();
    });

    it(`a JSON page of 100 tenants is one statement (and the watermark); the CSV of ${TENANTS} tenants one statement per ${CSV_PAGE_SIZE}`, async () => {
      const page = log.own(UsageRepository, 'usagePage');
      const json = log.own(UsageService, 'usageOfTenants');
      const until = new Date(Math.floor(Date.now() / 60_000) * 60_000);
      const query = windowQuery(new Date(until.getTime() - 366 * DAY), until);
      let cursor: string | null = null;
      const rows: any[] = [];
      do {
        log.sent.length = 0;
        const path: string = `/v1/tenant-usage?${query}&limit=100${cursor ? `&cursor=${cursor}` : ''}`;
        const body: any = expectStatus(await request(ringlane.app).get(path).set('Authorization', bearer(owner.key)), 200).body;
        rows.push(...body.data);
        cursor = body.next_cursor;
        const inService = log.sent.filter((s) => s.owners.includes(json));
        expect(inService.map((s) => (s.owners.includes(page) ? 'page' : s.text.trim().slice(0, 40)))).to.deep.equal([
          'SELECT rolled_until FROM usage_watermark',
          'page',
        ]);
      } while (cursor);
      expect(rows).to.have.lengthOf(TENANTS);

      log.sent.length = 0;
      const { res, text } = await csvOf(owner.key, query, ringlane.app);
      expectStatus(res, 200);
      expect(parseCsv(text)).to.deep.equal(rows.map(asRecord));
      expect(log.sent.filter((s) => s.owners.includes(page))).to.have.lengthOf(Math.ceil(TENANTS / CSV_PAGE_SIZE));
    });
  });

  describe('streaming the CSV: the client hanging up, and a failure after the headers', function () {
    this.timeout(60_000);
    const TENANTS = 3 * CSV_PAGE_SIZE + 10;
    /** Decides what happens to the n-th page statement (1-based) before it is sent. */
    let beforePage: (n: number) => Promise<void> = async () => {};
    let pageStatements = 0;
    let dataSource: DataSource;
    let ringlane: ReturnType<typeof appOver>;
    let server: Server;
    let owner: Reseller;
    let ended: Promise<void>;
    /** The service's prototype, its CSV method as a plain function (replaced below, then restored). */
    const service = UsageService.prototype as unknown as { usageOfTenantsCsv: (this: UsageService, ...args: CsvArgs) => Promise<CsvFile> };
    const originalCsv = service.usageOfTenantsCsv;

    before(async () => {
      owner = await reseller();
      await insertManyTenants(owner, TENANTS);
      class GatedClient extends pg.Client {
        override query(...args: any[]): any {
          const text: unknown = typeof args[0] === 'string' ? args[0] : args[0]?.text;
          if (typeof text !== 'string' || !text.includes('ORDER BY t.id COLLATE "C"') || typeof args.at(-1) === 'function') {
            return (super.query as (...a: any[]) => any)(...args);
          }
          const n = ++pageStatements;
          return beforePage(n).then(() => (super.query as (...a: any[]) => Promise<any>)(...args));
        }
      }
      const options = db.options as PostgresDataSourceOptions;
      dataSource = await new DataSource({ ...options, extra: { ...options.extra, max: 1, Client: GatedClient } }).initialize();
      ringlane = appOver({ db: dataSource });
      server = createServer(ringlane.app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      // Observes when the CSV's chunks stop being produced, however that happens.
      service.usageOfTenantsCsv = async function (this: UsageService, ...args) {
        const file = await originalCsv.apply(this, args);
        let end!: () => void;
        ended = new Promise<void>((resolve) => (end = resolve));
        async function* observed() {
          try {
            yield* file.chunks;
          } finally {
            end();
          }
        }
        return new CsvFile(file.filename, observed());
      };
    });
    after(async () => {
      service.usageOfTenantsCsv = originalCsv;
      await new Promise((resolve) => server.close(resolve));
      await ringlane.close();
      await dataSource.destroy();
    });

    /** GET the CSV from the listening server; resolves with the response once `records` complete records (header included) arrived. */
    function openCsv(records: number): Promise<{ res: IncomingMessage; text: () => string; closed: Promise<void> }> {
      const { port } = server.address() as AddressInfo;
      return new Promise((resolve, reject) => {
        const req = httpGet({ port, host: '127.0.0.1', path: '/v1/tenant-usage', headers: { Authorization: bearer(owner.key), Accept: 'text/csv' } }, (res) => {
          let text = '';
          const closed = new Promise<void>((done) => res.on('close', done));
          res.on('error', () => {});
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            const before = text.split('\r\n').length - 1;
            text += chunk;
            if (before < records && text.split('\r\n').length - 1 >= records) resolve({ res, text: () => text, closed });
          });
        });
        req.on('error', reject);
      });
    }

    const until = async (condition: () => Promise<boolean> | boolean, what: string) => {
      for (const deadline = Date.now() + 20_000; !(await condition()); await new Promise((r) => setTimeout(r, 10))) {
        if (Date.now() > deadline) throw new Error(`waited in vain for ${what}`);
      }
    };

    it('a client that hangs up mid-stream stops the reads: the page being read is the last', async () => {
      pageStatements = 0;
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      // The second page waits until the client has gone.
      beforePage = (n) => (n === 2 ? released : Promise.resolve());
      const { res, text } = await openCsv(1 + CSV_PAGE_SIZE);
      expect(res.statusCode).to.equal(200);
      expect(parseCsv(text())).to.have.lengthOf(CSV_PAGE_SIZE);
      res.destroy();
      await until(() => new Promise<boolean>((resolve) => server.getConnections((_, n) => resolve(n === 0))), 'the server to see the client gone');
      release();
      await ended;
      expect(pageStatements, 'page statements sent').to.equal(2);
      // The app goes on serving.
      expectStatus(await request(ringlane.app).get('/v1/tenant-usage?limit=1').set('Authorization', bearer(owner.key)), 200);
    });

    it('a failure after the headers went out breaks the connection: the client never gets an answer that looks complete', async () => {
      pageStatements = 0;
      beforePage = (n) => (n === 2 ? Promise.reject(new Error('the database went away')) : Promise.resolve());
      const { res, text, closed } = await openCsv(1 + CSV_PAGE_SIZE);
      expect(res.statusCode).to.equal(200);
      await closed;
      expect(res.complete, 'the response ended properly').to.equal(false);
      expect(text().split('\r\n').length - 1).to.equal(1 + CSV_PAGE_SIZE);
      await ended;
      expect(pageStatements).to.equal(2);
    });

    it('a failure before anything was sent is an ordinary error answer', async () => {
      pageStatements = 0;
      beforePage = () => Promise.reject(new Error('the database went away'));
      const { res } = await csvOf(owner.key, '', ringlane.app);
      expectError(res, 500, 'internal_error');
      beforePage = async () => {};
    });
  });

  describe('who may read it', () => {
    it('needs no capability: a read-only key reads it, JSON and CSV', async () => {
      const owner = await reseller();
      await createTenant(owner);
      const key = await keyWith(owner, []);
      expect(expectStatus(await asCaller(key).get('/v1/tenant-usage'), 200).body.data).to.have.lengthOf(1);
      expect(parseCsv((await csvOf(key)).text)).to.have.lengthOf(1);
    });

    it('answers JSON unless Accept prefers text/csv; odd Accept headers are ordinary input', async () => {
      const owner = await reseller();
      await createTenant(owner);
      const accept = async (value: string) =>
        request(await app())
          .get('/v1/tenant-usage')
          .set({ Authorization: bearer(owner.key), Accept: value });
      for (const value of [
        '*/*',
        'application/json',
        'text/html',
        'text/csv;q=0.1, application/json',
        'text/*;q=abc',
        ',,;;',
        '\u00e9/\u00e9',
        'x'.repeat(5000),
      ]) {
        const res = await accept(value);
        expect(res.status, value).to.equal(200);
        expect(res.headers['content-type'], value).to.match(/^application\/json/);
      }
      for (const value of ['text/csv', 'application/json;q=0.5, text/csv', 'text/csv; charset=utf-8']) {
        const res = await accept(value);
        expect([res.status, res.headers['content-type']], value).to.satisfy(([status, type]: [number, string]) => status === 200 && /^text\/csv/.test(type));
      }
    });

    it('is 403 not_a_reseller for an ordinary organization and 403 not_available_for_tenant inside a tenant, whatever the format', async () => {
      const ordinary = await createOrg();
      const owner = await reseller();
      const tenant = await createTenant(owner);
      expectError(await asCaller(ordinary.key).get('/v1/tenant-usage'), 403, 'not_a_reseller');
      expectError((await csvOf(ordinary.key)).res, 403, 'not_a_reseller');
      expectError(await owner.inside(tenant.id).get('/v1/tenant-usage'), 403, 'not_available_for_tenant');
      const inside = await request(await app())
        .get('/v1/tenant-usage')
        .set({ Authorization: bearer(owner.key), 'X-Tenant-Id': tenant.id, Accept: 'text/csv' });
      expectError(inside, 403, 'not_available_for_tenant');
    });

    it('answers 400 invalid_window as GET /v1/tenants/{id}/usage does, in JSON even when CSV was asked for; other bad input 400 invalid_request', async () => {
      const owner = await reseller();
      const tenant = await createTenant(owner);
      for (const query of [
        'since=2026-11-01',
        `since=${encodeURIComponent('2026-11-01T00:00:00+00:00')}`,
        'since=2026-02-30T00:00:00Z',
        'since=2026-11-02T00:00:00Z&until=2026-11-01T00:00:00Z',
        'since=2025-11-01T00:00:00Z&until=2026-11-02T00:00:00.001Z',
        `since=${new Date(Date.now() + HOUR).toISOString()}`,
        'since=2026-11-01T00:00:00Z&since=2026-11-02T00:00:00Z',
      ]) {
        const single = expectError(await owner.as.get(`/v1/tenants/${tenant.id}/usage?${query}`), 400, 'invalid_window');
        expect(expectError(await owner.as.get(`/v1/tenant-usage?${query}`), 400, 'invalid_window'), query).to.deep.equal(single);
        expect(expectError((await csvOf(owner.key, query)).res, 400, 'invalid_window')).to.deep.equal(single);
      }
      expectInvalid(await owner.as.get('/v1/tenant-usage?limit=0'), 'limit');
      expectInvalid(await owner.as.get('/v1/tenant-usage?limit=101'), 'limit');
      expectInvalid(await owner.as.get('/v1/tenant-usage?tenant_id=x'), 'tenant_id');
      const full = expectStatus(await owner.as.get('/v1/tenant-usage?since=2025-11-01T00:00:00Z&until=2026-11-02T00:00:00Z'), 200).body.data;
      expect(full[0]).to.include({ since: '2025-11-01T00:00:00.000Z', until: '2026-11-02T00:00:00.000Z' });
    });
  });
});
