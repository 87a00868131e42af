import type { EntityManager } from 'typeorm';
import { AgentsRepository } from './agents.repository.js';

/**
 * @deprecated Transition only: src/numbers checks an agent through this until `createRuntime`
 * gives it the AgentsRepository (`agents.findRow(em, orgId, id)`); delete this file then.
 */
export const agentsService = {
  findRow: (em: EntityManager, orgId: string, id: string) => new AgentsRepository(em.dataSource).findRow(em, orgId, id),
};
