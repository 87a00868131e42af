import type { DataSource } from 'typeorm';
import { ConflictError } from '../lib/errors.js';
import { column, rowShape, type Presented, type RowOf } from '../lib/sql.js';
import { OrgResourceRepository } from '../orgs/org-resource.repository.js';
import type { AgentKind } from './agents.schemas.js';

/** An agent's row: the one declaration of its fields (the API shows it with ISO times). */
export const agentShape = rowShape('agents', {
  id: column<string>(),
  name: column<string>(),
  kind: column<AgentKind>(),
  greeting: column<string>(),
  voice: column<string>(),
  prompt: column<string>(),
  created_at: column<Date>(),
  updated_at: column<Date>(),
});

export type AgentRow = RowOf<typeof agentShape.columns>;
export type AgentView = Presented<AgentRow>;

/**
 * The organization's agents. An agent a campaign uses cannot be deleted (409 `agent_in_use`,
 * from the campaigns' RESTRICT foreign key); numbers it answers lose their agent (SET NULL).
 * Tenant provisioning creates a tenant's agent with `insertRow(em, tenantId, fields)`; numbers
 * and campaigns check an agent is the organization's with `findRow(em, orgId, id)` (404
 * `agent_not_found`).
 */
export class AgentsRepository extends OrgResourceRepository<typeof agentShape.columns> {
  constructor(db: DataSource) {
    super(db, {
      shape: agentShape,
      resource: 'agent',
      idPrefix: 'agt',
      inUse: () => new ConflictError('agent_in_use', 'A campaign uses this agent; delete or change the campaign first.'),
    });
  }
}
