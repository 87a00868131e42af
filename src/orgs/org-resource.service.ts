import type { Actor } from '../auth/actor.js';
import type { ResourceService } from '../http/resource-routes.js';
import type { Page } from '../lib/pagination.js';
import type { Presented, RowOf } from '../lib/sql.js';
import type { Fields, OrgResourceColumns, OrgResourceRepository, ResourceQuery } from './org-resource.repository.js';

/** The standard routes of an organization-owned resource, scoped to the acting organization's rows. */
export class OrgResourceService<M extends OrgResourceColumns, F extends keyof M & string = never> implements ResourceService<
  Fields<RowOf<M>>,
  Fields<RowOf<M>>,
  ResourceQuery<M, F>,
  Presented<RowOf<M>>
> {
  constructor(private readonly rows: OrgResourceRepository<M, F>) {}

  get resource(): string {
    return this.rows.resource;
  }

  list(actor: Actor, query: ResourceQuery<M, F>): Promise<Page<Presented<RowOf<M>>>> {
    return this.rows.list(actor.org.id, query);
  }

  read(actor: Actor, id: string): Promise<Presented<RowOf<M>>> {
    return this.rows.read(actor.org.id, id);
  }

  create(actor: Actor, input: Fields<RowOf<M>>): Promise<Presented<RowOf<M>>> {
    return this.rows.create(actor.org.id, input);
  }

  update(actor: Actor, id: string, changes: Fields<RowOf<M>>): Promise<Presented<RowOf<M>>> {
    return this.rows.update(actor.org.id, id, changes);
  }

  remove(actor: Actor, id: string): Promise<void> {
    return this.rows.remove(actor.org.id, id);
  }
}
