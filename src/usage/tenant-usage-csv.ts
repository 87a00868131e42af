import { CsvFile, csvRecord, type CsvValue } from '../lib/csv.js';
import type { UsageWindow } from './usage-window.js';
import type { TenantUsageRow } from './usage.schemas.js';

/** CONTRACT.md §5 "Usage of every tenant": the CSV's columns, and each one's value in a row. */
const COLUMNS: ReadonlyArray<[string, (row: TenantUsageRow) => CsvValue]> = [
  ['tenant_id', (r) => r.tenant_id],
  ['name', (r) => r.name],
  ['external_ref', (r) => r.external_ref],
  ['disabled', (r) => r.disabled],
  ['since', (r) => r.since],
  ['until', (r) => r.until],
  ['completed_calls', (r) => r.completed_calls],
  ['talk_time_seconds', (r) => r.talk_time_seconds],
  ['currency', (r) => r.currency],
  ['charges_calls', (r) => r.charges.calls],
  ['charges_other', (r) => r.charges.other],
  ['charges_total', (r) => r.charges.total],
  ['billable_calls', (r) => r.billable.calls],
  ['billable_other', (r) => r.billable.other],
  ['billable_total', (r) => r.billable.total],
];

/** A time in ISO 8601 basic form, `20261101T000000Z` (milliseconds only when there are some: `20261101T000000.500Z`). */
const basicIso = (at: Date) => at.toISOString().replace(/[-:]/g, '').replace('.000Z', 'Z');

/**
 * The report as a CSV file: the header row, then each page's rows as one chunk (the same values as
 * the JSON rows, unaltered), named `tenant-usage-<since>-<until>.csv`.
 */
export function tenantUsageCsv(window: UsageWindow, pages: AsyncIterable<TenantUsageRow[]>): CsvFile {
  async function* chunks(): AsyncGenerator<string> {
    yield csvRecord(COLUMNS.map(([name]) => name));
    for await (const page of pages) yield page.map((row) => csvRecord(COLUMNS.map(([, value]) => value(row)))).join('');
  }
  return new CsvFile(`tenant-usage-${basicIso(window.since)}-${basicIso(window.until)}.csv`, chunks());
}
