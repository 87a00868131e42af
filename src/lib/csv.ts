// CSV as RFC 4180 writes it, for answers that a spreadsheet or a billing system imports.

/** A field's value: written as is (numbers and booleans as their text), null as an empty field. */
export type CsvValue = string | number | boolean | null;

const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One record: fields separated by commas, ended by CRLF; a field holding a comma, a quote or a
 * line break is quoted, its quotes doubled. Values are never altered otherwise (no escaping of
 * a leading `=`, `+`, `-` or `@`: what a spreadsheet makes of them is the importer's choice).
 */
export function csvRecord(fields: readonly CsvValue[]): string {
  return `${fields.map(csvField).join(',')}\r\n`;
}

function csvField(value: CsvValue): string {
  const text = value === null ? '' : String(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * A CSV answer to stream as an attachment: `chunks` (records, joined as they are read) are
 * produced as the client takes them; the client hanging up ends the iteration.
 */
export class CsvFile {
  constructor(
    readonly filename: string,
    readonly chunks: AsyncIterable<string>,
  ) {}
}
