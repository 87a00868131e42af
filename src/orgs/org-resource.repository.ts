import type { DataSource, EntityManager } from 'typeorm';
import { pgCode, PG_UNIQUE_VIOLATION } from '../lib/db.js';
import { NotFoundError, type AppError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { listPage, type Page, type PageParams } from '../lib/pagination.js';
import { presentRow, SqlValue, where, Where, type Column, type ColumnMap, type Presented, type RowOf, type RowShape } from '../lib/sql.js';
import { Reads } from '../lib/reads.js';

const PG_FOREIGN_KEY_VIOLATION = '23503';

/** The columns every organization-owned row shape has: the keyset of its list pages. */
export type OrgResourceColumns = ColumnMap & { id: Column<string>; created_at: Column<Date> };

const GENERATED = ['id', 'created_at', 'updated_at'] as const;

/** Every non-generated column, optional, plus write-only `W`; a value may be a `SqlValue` computed from the row as it was. */
export type Fields<R, W = object> = {
  [K in Exclude<keyof R, (typeof GENERATED)[number]> | keyof W]?: (K extends keyof R ? R[K] : K extends keyof W ? W[K] : never) | SqlValue;
};

/** The list query of a resource: a page, and equality on each filter column. */
export type ResourceQuery<M extends ColumnMap, F extends keyof M> = PageParams & Partial<Pick<RowOf<M>, F>>;

export interface ViolationMeanings {
  conflicts?: Readonly<Record<string, () => AppError>>;
  missingReference?: () => AppError;
  inUse?: () => AppError;
}

export interface OrgResourceSpec<M extends OrgResourceColumns, F extends keyof M & string, W extends ColumnMap> extends ViolationMeanings {
  /** Declared once: the row type, select list, writable columns (not `org_id`) and view derive from it. */
  shape: RowShape<M>;
  resource: string;
  idPrefix: string;
  filters?: readonly F[];
  /** Writable but never selected (a secret, bookkeeping the API does not show). */
  writeOnly?: W;
}

/** `SqlValue`s are bound into `params`; anything else is a bound parameter. */
const valueOf = (params: Where, value: unknown): string => (value instanceof SqlValue ? params.bind(value.sql, value.values) : params.param(value));

function violatedConstraint(err: unknown): string | undefined {
  return (err as { driverError?: { constraint?: string } })?.driverError?.constraint;
}

/** Runs `write`, turning violations the table knows the meaning of into their errors. */
export async function translateViolations<T>(
  conflicts: ViolationMeanings['conflicts'],
  onForeignKey: (() => AppError) | undefined,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (err) {
    const code = pgCode(err);
    const conflict = code === PG_UNIQUE_VIOLATION ? conflicts?.[violatedConstraint(err) ?? ''] : undefined;
    if (conflict) throw conflict();
    if (code === PG_FOREIGN_KEY_VIOLATION && onForeignKey) throw onForeignKey();
    throw err;
  }
}

/** Always scoped by organization: another's id is as unknown as one that never existed. `em` methods join the caller's transaction. */
export class OrgResourceRepository<M extends OrgResourceColumns, F extends keyof M & string = never, W extends ColumnMap = Record<never, Column<unknown>>> {
  private readonly select: string;
  private readonly writable: ReadonlySet<string>;
  private readonly touches: boolean;

  constructor(
    private readonly db: DataSource,
    private readonly spec: OrgResourceSpec<M, F, W>,
    /** The lists' server: the standby in a GET request of the API that may use it (docs/scaling.md#read-replica). */
    private readonly reads: Reads = new Reads(db),
  ) {
    this.select = spec.shape.select();
    const generated: readonly string[] = GENERATED;
    const plain = Object.entries(spec.shape.columns).filter(([name, c]) => c.sql === null && !generated.includes(name));
    this.writable = new Set([...plain.map(([name]) => name), ...Object.keys(spec.writeOnly ?? {})]);
    this.touches = 'updated_at' in spec.shape.columns;
  }

  get resource(): string {
    return this.spec.resource;
  }

  list(orgId: string, query: ResourceQuery<M, F>): Promise<Page<Presented<RowOf<M>>>> {
    const filters = where('org_id = ?', orgId);
    for (const filter of this.spec.filters ?? []) filters.equal(filter, query[filter]);
    // RowOf<M> has the keyset (`OrgResourceColumns`), though TypeScript cannot see it through M.
    const present = (row: RowOf<M> & { id: string; created_at: Date }) => presentRow<RowOf<M>>(row);
    return this.reads.run((sql) => listPage(sql, { select: this.select, from: this.spec.shape.from(), where: filters }, query, present));
  }

  async read(orgId: string, id: string): Promise<Presented<RowOf<M>>> {
    return presentRow(await this.findRow(this.db.manager, orgId, id));
  }

  async create(orgId: string, fields: Fields<RowOf<M>, RowOf<W>>): Promise<Presented<RowOf<M>>> {
    return presentRow(await this.insertRow(this.db.manager, orgId, fields));
  }

  async update(orgId: string, id: string, changes: Fields<RowOf<M>, RowOf<W>>): Promise<Presented<RowOf<M>>> {
    return presentRow(await this.updateRow(this.db.manager, orgId, id, changes));
  }

  async remove(orgId: string, id: string): Promise<void> {
    await this.deleteRow(this.db.manager, orgId, id);
  }

  /** 404 when the organization has no such row; `lock` holds it FOR UPDATE until `em`'s transaction ends. */
  async findRow(em: EntityManager, orgId: string, id: string, lock = false): Promise<RowOf<M>> {
    const [row] = await em.query<RowOf<M>[]>(`SELECT ${this.select} FROM ${this.spec.shape.table} WHERE id = $1 AND org_id = $2${lock ? ' FOR UPDATE' : ''}`, [
      id,
      orgId,
    ]);
    if (!row) throw this.notFound();
    return row;
  }

  async insertRow(em: EntityManager, orgId: string, fields: Fields<RowOf<M>, RowOf<W>>): Promise<RowOf<M>> {
    const [row] = await this.insertRows(em, orgId, [fields]);
    return row;
  }

  async insertRows(em: EntityManager, orgId: string, rows: readonly Fields<RowOf<M>, RowOf<W>>[]): Promise<RowOf<M>[]> {
    if (!rows.length) return [];
    const written = rows.map((fields) => new Map(this.written(fields)));
    const columns = [...new Set(written.flatMap((fields) => [...fields.keys()]))];
    // Only for numbered parameters: an INSERT has no condition.
    const params = new Where();
    const values = written.map((fields) => {
      const own = columns.map((column) => (fields.has(column) ? valueOf(params, fields.get(column)) : 'DEFAULT'));
      return `(${[params.param(newId(this.spec.idPrefix)), params.param(orgId), ...own].join(', ')})`;
    });
    return this.translate(this.spec.missingReference, () =>
      em.query<RowOf<M>[]>(
        `INSERT INTO ${this.spec.shape.table} (${['id', 'org_id', ...columns].join(', ')}) VALUES ${values.join(', ')} RETURNING ${this.select}`,
        params.params,
      ),
    );
  }

  /** 404 when the organization has no such row; sets `updated_at` too when the table has one. */
  async updateRow(em: EntityManager, orgId: string, id: string, changes: Fields<RowOf<M>, RowOf<W>>): Promise<RowOf<M>> {
    const target = new Where();
    const set = this.written(changes).map(([column, value]) => `${column} = ${valueOf(target, value)}`);
    if (this.touches) set.push('updated_at = now()');
    target.and('id = ? AND org_id = ?', id, orgId);
    // TypeORM answers an UPDATE with [rows, count].
    const [[row]] = await this.translate(this.spec.missingReference, () =>
      em.query<[RowOf<M>[], number]>(`UPDATE ${this.spec.shape.table} SET ${set.join(', ')} WHERE ${target} RETURNING ${this.select}`, target.params),
    );
    if (!row) throw this.notFound();
    return row;
  }

  async deleteRow(em: EntityManager, orgId: string, id: string): Promise<RowOf<M>> {
    // TypeORM answers a DELETE with [rows, count].
    const [[row]] = await this.translate(this.spec.inUse, () =>
      em.query<[RowOf<M>[], number]>(`DELETE FROM ${this.spec.shape.table} WHERE id = $1 AND org_id = $2 RETURNING ${this.select}`, [id, orgId]),
    );
    if (!row) throw this.notFound();
    return row;
  }

  private notFound(): NotFoundError {
    return new NotFoundError(this.spec.resource);
  }

  private written(fields: object): [string, unknown][] {
    return Object.entries(fields).filter(([column, value]) => value !== undefined && this.writable.has(column));
  }

  private translate<T>(onForeignKey: (() => AppError) | undefined, write: () => Promise<T>): Promise<T> {
    return translateViolations(this.spec.conflicts, onForeignKey, write);
  }
}
