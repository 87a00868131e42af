import type { DataSource } from 'typeorm';
import { ConflictError } from '../lib/errors.js';
import { column, rowShape, type Presented, type RowOf } from '../lib/sql.js';
import { OrgResourceRepository } from '../orgs/org-resource.repository.js';
import type { AgentKind } from './agents.schemas.js';
import type { Reads } from '../lib/reads.js';

/** The one declaration of an agent's fields. */
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

/** An agent a campaign uses cannot be deleted (409 `agent_in_use`, RESTRICT); its numbers lose it (SET NULL). */
export class AgentsRepository extends OrgResourceRepository<typeof agentShape.columns> {
  constructor(db: DataSource, reads?: Reads) {
    super(
      db,
      {
        shape: agentShape,
        resource: 'agent',
        idPrefix: 'agt',
        inUse: () => new ConflictError('agent_in_use', 'A campaign uses this agent; delete or change the campaign first.'),
      },
      reads,
    );
  }
}
