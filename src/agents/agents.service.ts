import { ConflictError } from '../lib/errors.js';
import { OrgResourceTable } from '../orgs/org-resource-table.js';
import { Agent } from './agent.entity.js';
import type { AgentInput } from './agents.schemas.js';

export interface AgentView {
  id: string;
  name: string;
  kind: string;
  greeting: string;
  voice: string;
  prompt: string;
  created_at: string;
  updated_at: string;
}

interface AgentRow {
  id: string;
  name: string;
  kind: string;
  greeting: string;
  voice: string;
  prompt: string;
  created_at: Date;
  updated_at: Date;
}

const presentAgent = (row: AgentRow): AgentView => ({
  id: row.id,
  name: row.name,
  kind: row.kind,
  greeting: row.greeting,
  voice: row.voice,
  prompt: row.prompt,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

/**
 * The organization's agents. An agent a campaign uses cannot be deleted (409 `agent_in_use`,
 * from the campaigns' RESTRICT foreign key); numbers it answers lose their agent (SET NULL).
 */
export const agentsService = new OrgResourceTable<Agent, AgentRow, AgentView, AgentInput, Partial<AgentInput>>({
  entity: Agent,
  table: 'agents',
  resource: 'agent',
  idPrefix: 'agt',
  columns: 'id, name, kind, greeting, voice, prompt, created_at, updated_at',
  present: presentAgent,
  fields: { name: 'name', kind: 'kind', greeting: 'greeting', voice: 'voice', prompt: 'prompt' },
  inUse: () => new ConflictError('agent_in_use', 'A campaign uses this agent; delete or change the campaign first.'),
});
