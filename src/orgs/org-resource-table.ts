import type { EntityManager, EntityTarget, QueryDeepPartialEntity } from 'typeorm';
import type { Actor } from '../auth/actor.js';
import { listPage, type Page, type PageParams } from '../lib/pagination.js';
import { where } from '../lib/sql.js';
import type { ResourceService } from '../http/resource-routes.js';
import { db } from '../lib/db.js';
import { NotFoundError, type AppError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { OrgOwned } from './org-owned.js';
import { translateViolations, type ViolationMeanings } from './org-resource.repository.js';

/** A row as selected by plain SQL: snake_case columns, with the keyset of list pages. */
export interface ResourceRow {
  id: string;
  created_at: Date;
}

export interface OrgResourceTableSpec<E extends OrgOwned, R extends ResourceRow, V> extends ViolationMeanings {
  entity: EntityTarget<E>;
  /** The entity's table, for plain SQL reads. */
  table: string;
  /** snake_case name: an unknown id is 404 `<resource>_not_found`. */
  resource: string;
  /** Prefix of new ids (CONTRACT.md §2 "Ids"). */
  idPrefix: string;
  /** The columns a view is made from; must include `id` and `created_at`. */
  columns: string;
  present(row: R): V;
  /** Request field → entity property, for every field a create or an update may carry. */
  fields: Readonly<Record<string, keyof E & string>>;
  /** List query fields that filter by equality on the column of the same name. */
  filters?: readonly string[];
}

/**
 * The rows of one table of organization-owned resources, always scoped by the acting
 * organization: another organization's id is exactly as unknown as an id that never existed.
 * Serves the standard routes directly (see `resourceRoutes`); services with more rules
 * build on its `em`-taking methods inside their own transactions.
 *
 * @deprecated Transition only: webhook endpoints (src/webhooks) still use it, on the `db`
 * singleton. Its successor is `OrgResourceRepository` (one column map instead of columns, row
 * type, presenter and field map; built with the DataSource in `createRuntime`); delete this
 * file when they have moved to it.
 */
export class OrgResourceTable<E extends OrgOwned, R extends ResourceRow, V, C extends object, U extends object, Q extends PageParams = PageParams>
  implements ResourceService<C, U, Q, V>
{
  constructor(private readonly spec: OrgResourceTableSpec<E, R, V>) {}

  get resource(): string {
    return this.spec.resource;
  }

  list(actor: Actor, query: Q): Promise<Page<V>> {
    const filters = where('org_id = ?', actor.org.id);
    for (const filter of this.spec.filters ?? []) filters.equal(filter, (query as Record<string, unknown>)[filter]);
    return listPage(db, { select: this.spec.columns, from: this.spec.table, where: filters }, query, this.spec.present);
  }

  async read(actor: Actor, id: string): Promise<V> {
    return this.spec.present(await this.findRow(db.manager, actor.org.id, id));
  }

  create(actor: Actor, input: C): Promise<V> {
    return this.insert(db.manager, actor.org.id, input);
  }

  async update(actor: Actor, id: string, input: U): Promise<V> {
    return this.spec.present(await this.updateRow(db.manager, actor.org.id, id, input));
  }

  async remove(actor: Actor, id: string): Promise<void> {
    await this.deleteRow(db.manager, actor.org.id, id);
  }

  /**
   * The organization's row with this id; 404 `<resource>_not_found` when it has none. `lock`
   * holds it (FOR UPDATE) until `em`'s transaction ends, for a write that depends on it.
   */
  async findRow(em: EntityManager, orgId: string, id: string, lock = false): Promise<R> {
    const [row] = await em.query(`SELECT ${this.spec.columns} FROM ${this.spec.table} WHERE id = $1 AND org_id = $2${lock ? ' FOR UPDATE' : ''}`, [id, orgId]);
    if (!row) throw this.notFound();
    return row;
  }

  async insert(em: EntityManager, orgId: string, input: C): Promise<V> {
    const values = { ...this.toEntity(input), id: newId(this.spec.idPrefix), orgId } as QueryDeepPartialEntity<E>;
    const result = await this.translate(this.spec.missingReference, () =>
      em.createQueryBuilder().insert().into(this.spec.entity).values(values).returning(this.spec.columns).execute(),
    );
    return this.spec.present(result.raw[0]);
  }

  async updateRow(em: EntityManager, orgId: string, id: string, input: U): Promise<R> {
    const result = await this.translate(this.spec.missingReference, () =>
      em
        .createQueryBuilder()
        .update(this.spec.entity)
        .set(this.toEntity(input))
        .where('id = :id AND org_id = :orgId', { id, orgId })
        .returning(this.spec.columns)
        .execute(),
    );
    if (!result.raw[0]) throw this.notFound();
    return result.raw[0];
  }

  /** Deletes the organization's row with this id and returns it. */
  async deleteRow(em: EntityManager, orgId: string, id: string): Promise<R> {
    const result = await this.translate(this.spec.inUse, () =>
      em
        .createQueryBuilder()
        .delete()
        .from(this.spec.entity)
        .where('id = :id AND org_id = :orgId', { id, orgId })
        .returning(this.spec.columns)
        .execute(),
    );
    if (!result.raw[0]) throw this.notFound();
    return result.raw[0];
  }

  private notFound(): NotFoundError {
    return new NotFoundError(this.spec.resource);
  }

  private toEntity(input: object): QueryDeepPartialEntity<E> {
    const values: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(input)) {
      const property = this.spec.fields[field];
      if (property && value !== undefined) values[property] = value;
    }
    return values as QueryDeepPartialEntity<E>;
  }

  private translate<T>(onForeignKey: (() => AppError) | undefined, write: () => Promise<T>): Promise<T> {
    return translateViolations(this.spec.conflicts, onForeignKey, write);
  }
}
