import type { Actor } from '../auth/actor.js';
import type { CsvFile } from '../lib/csv.js';
import { formatMoney } from '../lib/money.js';
import { decodeIdCursor, encodeIdCursor, type Page } from '../lib/pagination.js';
import { tenantNotFound } from '../tenants/tenants.service.js';
import type { Amounts, TenantUsage, TenantUsageListQuery, TenantUsageRow, UsageQuery } from './usage.schemas.js';
import type { UsageFigures, UsageRepository } from './usage.repository.js';
import { resolveUsageWindow, splitWindow, type UsageWindow, type WindowParts } from './usage-window.js';
import { tenantUsageCsv } from './tenant-usage-csv.js';

/**
 * Tenants per statement of the CSV report, the largest JSON page: one page in memory at a time, and a
 * year's statement for as many tenants stays below the cost at which Postgres JIT-compiles it (which
 * would cost more than it saves).
 */
export const CSV_PAGE_SIZE = 100;

const amounts = (calls: bigint, other: bigint): Amounts => ({ calls: formatMoney(calls), other: formatMoney(other), total: formatMoney(calls + other) });

/** A tenant's row, its fields in the contract's order. */
function presentRow(row: UsageFigures, window: UsageWindow): TenantUsageRow {
  return {
    tenant_id: row.tenant_id,
    name: row.name,
    external_ref: row.external_ref,
    disabled: row.disabled,
    since: window.since.toISOString(),
    until: window.until.toISOString(),
    completed_calls: Number(row.completed_calls),
    talk_time_seconds: Number(row.talk_time_seconds),
    currency: String(row.currency).trim(),
    charges: amounts(BigInt(row.call_charges), BigInt(row.other_charges)),
    billable: amounts(BigInt(row.billable_calls), BigInt(row.billable_other)),
  };
}

/**
 * Exact (sums of integer micros) and current: what is not rolled up yet is read from the source.
 * One tenant's usage and the report of every tenant come from the one statement of
 * `UsageRepository`, so a row of the report is exactly that tenant's usage for the window.
 */
export class UsageService {
  constructor(private readonly repository: UsageRepository) {}

  async tenantUsage(actor: Actor, tenantId: string, query: UsageQuery, now: Date = new Date()): Promise<TenantUsage> {
    const window = resolveUsageWindow(query, now);
    // The statement reads the tenant only as the reseller's own: no row is 404, as for another's id.
    const row = await this.repository.usageOf(actor.org.id, tenantId, splitWindow(window, await this.repository.watermark()));
    if (!row) throw tenantNotFound();
    const { name, external_ref, disabled, ...usage } = presentRow(row, window);
    return usage;
  }

  /** A page of the report: the reseller's tenants in byte order of id, each with its usage; one statement (and the watermark). */
  async usageOfTenants(actor: Actor, query: TenantUsageListQuery, now: Date = new Date()): Promise<Page<TenantUsageRow>> {
    const window = resolveUsageWindow(query, now);
    const after = query.cursor === undefined ? null : decodeIdCursor(query.cursor);
    const parts = splitWindow(window, await this.repository.watermark());
    const rows = await this.repository.usagePage(actor.org.id, parts, { after, size: query.limit + 1 });
    const more = rows.length > query.limit;
    const data = (more ? rows.slice(0, query.limit) : rows).map((row) => presentRow(row, window));
    return { data, next_cursor: more ? encodeIdCursor(data[data.length - 1].tenant_id) : null };
  }

  /**
   * The whole report as CSV (`limit` and `cursor` play no part): the first page is read before
   * anything is sent, so a failure up to there is an ordinary error answer; each further page is
   * read when the client has taken the one before. The window and its split are fixed once, so
   * every row covers the same window; each page is read as it is sent (no snapshot across pages).
   */
  async usageOfTenantsCsv(actor: Actor, query: UsageQuery, now: Date = new Date()): Promise<CsvFile> {
    const window = resolveUsageWindow(query, now);
    const parts = splitWindow(window, await this.repository.watermark());
    const first = await this.csvPage(actor.org.id, window, parts, null);
    return tenantUsageCsv(window, this.csvPages(actor.org.id, window, parts, first));
  }

  /** Page after page, until one is not full; a consumer that stops asking (the client left) stops the reads. */
  private async *csvPages(resellerId: string, window: UsageWindow, parts: WindowParts, first: TenantUsageRow[]): AsyncGenerator<TenantUsageRow[]> {
    let page = first;
    yield page;
    while (page.length === CSV_PAGE_SIZE) {
      page = await this.csvPage(resellerId, window, parts, page[page.length - 1].tenant_id);
      yield page;
    }
  }

  private async csvPage(resellerId: string, window: UsageWindow, parts: WindowParts, after: string | null): Promise<TenantUsageRow[]> {
    const rows = await this.repository.usagePage(resellerId, parts, { after, size: CSV_PAGE_SIZE });
    return rows.map((row) => presentRow(row, window));
  }
}
