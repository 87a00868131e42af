import type { ApiRouter } from '../http/endpoint.js';
import { resourceRoutes } from '../http/resource-routes.js';
import { agentSchema, createAgentSchema, listAgentsQuery, updateAgentSchema } from './agents.schemas.js';
import { agentsService } from './agents.service.js';

/** `/v1/agents` (CONTRACT.md "Other areas"): writes need `operate`. */
export function agentRoutes(api: ApiRouter): void {
  resourceRoutes(api, {
    path: '/agents',
    capability: 'operate',
    service: agentsService,
    errors: { remove: { 409: ['agent_in_use'] } },
    schemas: { create: createAgentSchema, update: updateAgentSchema, list: listAgentsQuery, view: agentSchema },
  });
}
