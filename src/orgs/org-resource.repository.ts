import type { DataSource, EntityManager } from 'typeorm';
import { pgCode, PG_UNIQUE_VIOLATION } from '../lib/db.js';
import { NotFoundError, type AppError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { listPage, type Page, type PageParams } from '../lib/pagination.js';
import { presentRow, SqlValue, where, Where, type Column, type ColumnMap, type Presented, type RowOf, type RowShape } from '../lib/sql.js';

const PG_FOREIGN_KEY_VIOLATION = '23503';

/** The columns every organization-owned row shape has: the keyset of its list pages. */
export type OrgResourceColumns = ColumnMap & { id: Column<string>; created_at: Column<Date> };

/** Columns the database sets: the id (from `idPrefix`) and the times. */
const GENERATED = ['id', 'created_at', 'updated_at'] as const;

/**
 * What a write may set: any column of the row but the generated ones, each optional (a
 * create leaves out what has a database default; an update, what it does not change), and
 * the write-only columns `W`; a value may be SQL (`SqlValue`) computed from the row as it was.
 */
export type Fields<R, W = object> = { [K in Exclude<keyof R, (typeof GENERATED)[number]> | keyof W]?: (K extends keyof R ? R[K] : K extends keyof W ? W[K] : never) | SqlValue };

/** The list query of a resource: a page, and equality on each filter column. */
export type ResourceQuery<M extends ColumnMap, F extends keyof M> = PageParams & Partial<Pick<RowOf<M>, F>>;

/** What violations of a table's constraints mean to the API. */
export interface ViolationMeanings {
  /** Unique index → the conflict a violation of it means. */
  conflicts?: Readonly<Record<string, () => AppError>>;
  /** The error when a written row refers to a row that does not exist (a foreign key). */
  missingReference?: () => AppError;
  /** The conflict when other rows still refer to one being deleted (a RESTRICT foreign key). */
  inUse?: () => AppError;
}

export interface OrgResourceSpec<M extends OrgResourceColumns, F extends keyof M & string, W extends ColumnMap> extends ViolationMeanings {
  /**
   * The row shape, declared once: its row type, its select list, the columns a write may set
   * (every plain column but `id`, `created_at`, `updated_at`; not `org_id`, which is the
   * organization's) and the view (the row with ISO times) all derive from it.
   */
  shape: RowShape<M>;
  /** snake_case name: an unknown id is 404 `<resource>_not_found`. */
  resource: string;
  /** Prefix of new ids (CONTRACT.md §2 "Ids"). */
  idPrefix: string;
  /** List query fields that filter by equality on the column of the same name. */
  filters?: readonly F[];
  /** Columns a write may set that are never selected (a secret, bookkeeping the API does not show). */
  writeOnly?: W;
}

/** A written value: SQL from code (its values bound as parameters of `params`), anything else a bound parameter. */
const valueOf = (params: Where, value: unknown): string => (value instanceof SqlValue ? params.bind(value.sql, value.values) : params.param(value));

/** The unique index or constraint a Postgres error names, if any. */
function violatedConstraint(err: unknown): string | undefined {
  return (err as { driverError?: { constraint?: string } })?.driverError?.constraint;
}

/**
 * Runs `write`, turning the violations a table knows the meaning of into their errors: a
 * unique index's conflict (`conflicts`), and a foreign key's `onForeignKey` (the write's
 * `missingReference`, a delete's `inUse`).
 */
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

/**
 * The rows of one table of organization-owned resources, always scoped by the organization:
 * another organization's id is exactly as unknown as an id that never existed. The methods
 * taking `em` run inside the caller's transaction and answer rows; the others run on the
 * DataSource and answer the resource as the API shows it (see `OrgResourceService`).
 *
 * Values are bound as they are: a jsonb column takes an object (pg sends it as JSON), a
 * Postgres array column a JavaScript array.
 */
export class OrgResourceRepository<M extends OrgResourceColumns, F extends keyof M & string = never, W extends ColumnMap = Record<never, Column<unknown>>> {
  private readonly select: string;
  private readonly writable: ReadonlySet<string>;
  /** Whether an update also sets `updated_at` (the table has one). */
  private readonly touches: boolean;

  constructor(
    private readonly db: DataSource,
    private readonly spec: OrgResourceSpec<M, F, W>,
  ) {
    this.select = spec.shape.select();
    const generated: readonly string[] = GENERATED;
    const plain = Object.entries(spec.shape.columns).filter(([name, c]) => c.sql === null && !generated.includes(name));
    this.writable = new Set([...plain.map(([name]) => name), ...Object.keys(spec.writeOnly ?? {})]);
    this.touches = 'updated_at' in spec.shape.columns;
  }

  /** snake_case name: an unknown id is 404 `<resource>_not_found`. */
  get resource(): string {
    return this.spec.resource;
  }

  /** One page of the organization's resources, newest first, filtered by the query's filters. */
  list(orgId: string, query: ResourceQuery<M, F>): Promise<Page<Presented<RowOf<M>>>> {
    const filters = where('org_id = ?', orgId);
    for (const filter of this.spec.filters ?? []) filters.equal(filter, query[filter]);
    // RowOf<M> has the keyset (`OrgResourceColumns`), though TypeScript cannot see it through M.
    const present = (row: RowOf<M> & { id: string; created_at: Date }) => presentRow<RowOf<M>>(row);
    return listPage(this.db, { select: this.select, from: this.spec.shape.from(), where: filters }, query, present);
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

  /**
   * The organization's row with this id; 404 `<resource>_not_found` when it has none. `lock`
   * holds it (FOR UPDATE) until `em`'s transaction ends, for a write that depends on it.
   */
  async findRow(em: EntityManager, orgId: string, id: string, lock = false): Promise<RowOf<M>> {
    const [row] = await em.query(`SELECT ${this.select} FROM ${this.spec.shape.table} WHERE id = $1 AND org_id = $2${lock ? ' FOR UPDATE' : ''}`, [id, orgId]);
    if (!row) throw this.notFound();
    return row;
  }

  /** Inserts one row of the organization: the fields given, database defaults for the rest. */
  async insertRow(em: EntityManager, orgId: string, fields: Fields<RowOf<M>, RowOf<W>>): Promise<RowOf<M>> {
    const [row] = await this.insertRows(em, orgId, [fields]);
    return row;
  }

  /** Inserts rows of the organization in one statement, in order; database defaults for the fields a row leaves out. */
  async insertRows(em: EntityManager, orgId: string, rows: readonly Fields<RowOf<M>, RowOf<W>>[]): Promise<RowOf<M>[]> {
    if (!rows.length) return [];
    const written = rows.map((fields) => new Map(this.written(fields)));
    const columns = [...new Set(written.flatMap((fields) => [...fields.keys()]))];
    // Only the numbered parameters of a Where: an INSERT has no condition.
    const params = new Where();
    const values = written.map((fields) => {
      const own = columns.map((column) => (fields.has(column) ? valueOf(params, fields.get(column)) : 'DEFAULT'));
      return `(${[params.param(newId(this.spec.idPrefix)), params.param(orgId), ...own].join(', ')})`;
    });
    return this.translate(this.spec.missingReference, () =>
      em.query(
        `INSERT INTO ${this.spec.shape.table} (${['id', 'org_id', ...columns].join(', ')}) VALUES ${values.join(', ')} RETURNING ${this.select}`,
        params.params,
      ),
    );
  }

  /** Sets the fields given on the organization's row with this id (and `updated_at`, when the table has one); 404 when it has none. */
  async updateRow(em: EntityManager, orgId: string, id: string, changes: Fields<RowOf<M>, RowOf<W>>): Promise<RowOf<M>> {
    const target = new Where();
    const set = this.written(changes).map(([column, value]) => `${column} = ${valueOf(target, value)}`);
    if (this.touches) set.push('updated_at = now()');
    target.and('id = ? AND org_id = ?', id, orgId);
    // An UPDATE answers [rows, count] through TypeORM.
    const [[row]] = await this.translate(this.spec.missingReference, () =>
      em.query(`UPDATE ${this.spec.shape.table} SET ${set.join(', ')} WHERE ${target} RETURNING ${this.select}`, target.params),
    );
    if (!row) throw this.notFound();
    return row;
  }

  /** Deletes the organization's row with this id and returns it; 404 when it has none. */
  async deleteRow(em: EntityManager, orgId: string, id: string): Promise<RowOf<M>> {
    // A DELETE answers [rows, count] through TypeORM.
    const [[row]] = await this.translate(this.spec.inUse, () =>
      em.query(`DELETE FROM ${this.spec.shape.table} WHERE id = $1 AND org_id = $2 RETURNING ${this.select}`, [id, orgId]),
    );
    if (!row) throw this.notFound();
    return row;
  }

  private notFound(): NotFoundError {
    return new NotFoundError(this.spec.resource);
  }

  /** The fields a write sets: the given ones that are writable columns of the shape. */
  private written(fields: object): [string, unknown][] {
    return Object.entries(fields).filter(([column, value]) => value !== undefined && this.writable.has(column));
  }

  private translate<T>(onForeignKey: (() => AppError) | undefined, write: () => Promise<T>): Promise<T> {
    return translateViolations(this.spec.conflicts, onForeignKey, write);
  }
}
