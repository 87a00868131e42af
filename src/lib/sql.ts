// Shared SQL building blocks: a row shape declared once as a column map, and a condition builder
// whose values are always bound parameters.

/** A column of a row shape: its TypeScript type, and its SQL when not the same-named column. */
export interface Column<T> {
  /** An expression (e.g. a subquery) selected `AS` the column's name; null: the column itself. */
  readonly sql: string | null;
  /** Phantom: carries the type. */
  readonly type?: T;
}

/** A column of type `T`, or an expression over the table's alias selected under the column's name. */
export const column = <T>(sql: string | null = null): Column<T> => ({ sql });

export type ColumnMap = Record<string, Column<unknown>>;

/** The row a column map selects: each column with its declared type. */
export type RowOf<M extends ColumnMap> = { [K in keyof M]: M[K] extends Column<infer T> ? T : never };

/** Timestamps as ISO 8601 strings. */
export type Presented<R> = { [K in keyof R]: R[K] extends Date ? string : R[K] extends Date | null ? string | null : R[K] };

/** SQL from code (never input) to write as a value; each `?` binds one of `values` (see `Where.bind`). */
export class SqlValue {
  constructor(
    readonly sql: string,
    readonly values: readonly unknown[] = [],
  ) {}
}

/** A table's row shape: select lists and presentation derive from its one column map. */
export class RowShape<M extends ColumnMap> {
  constructor(
    readonly table: string,
    readonly columns: M,
  ) {}

  select(alias?: string): string {
    const at = alias ? `${alias}.` : '';
    return Object.entries(this.columns)
      .map(([name, c]) => (c.sql === null ? `${at}${name}` : `${c.sql} AS ${name}`))
      .join(', ');
  }

  from(alias?: string): string {
    return alias ? `${this.table} ${alias}` : this.table;
  }
}

export const rowShape = <M extends ColumnMap>(table: string, columns: M): RowShape<M> => new RowShape(table, columns);

/** The row as the API shows it (see `Presented`). */
export function presentRow<R extends object>(row: R): Presented<R> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) out[key] = value instanceof Date ? value.toISOString() : value;
  return out as Presented<R>;
}

/** A condition built clause by clause; clauses are SQL from code, values only ever bound parameters. */
export class Where {
  private readonly clauses: string[] = [];
  readonly params: unknown[] = [];

  and(sql: string, ...values: unknown[]): this {
    this.clauses.push(this.bind(sql, values));
    return this;
  }

  /**
   * Replaces each `?` with a new parameter. A count mismatch is a defect (a value left out, or a `?` of
   * SQL's own such as jsonb's operator): it throws rather than bind `undefined` or shift every value.
   */
  bind(sql: string, values: readonly unknown[]): string {
    const marks = sql.split('?').length - 1;
    if (marks !== values.length) throw new Error(`SQL condition has ${marks} placeholder(s) but ${values.length} value(s): ${sql}`);
    let i = 0;
    return sql.replace(/\?/g, () => this.param(values[i++]));
  }

  /** Skipped when `value` is undefined (a filter the request did not give). */
  equal(column: string, value: unknown): this {
    return value === undefined ? this : this.and(`${column} = ?`, value);
  }

  matching(query: object, filters: Readonly<Record<string, string>>): this {
    for (const [field, col] of Object.entries(filters)) this.equal(col, (query as Record<string, unknown>)[field]);
    return this;
  }

  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  toString(): string {
    return this.clauses.length ? this.clauses.join(' AND ') : 'TRUE';
  }

  /** A condition of its own with this one's clauses and parameters, to extend without changing this one. */
  copy(): Where {
    const copy = new Where();
    copy.clauses.push(...this.clauses);
    copy.params.push(...this.params);
    return copy;
  }
}

/** A condition starting with `sql` (see `Where.and`). */
export const where = (sql: string, ...values: unknown[]): Where => new Where().and(sql, ...values);
