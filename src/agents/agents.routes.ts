import type { ApiRouter } from '../http/endpoint.js';
import { resourceRoutes } from '../http/resource-routes.js';
import type { OrgResourceService } from '../orgs/org-resource.service.js';
import { agentSchema, createAgentSchema, listAgentsQuery, updateAgentSchema } from './agents.schemas.js';
import type { agentShape } from './agents.repository.js';

/** `/v1/agents` (CONTRACT.md "Other areas"): writes need `operate`. */
export function agentRoutes(api: ApiRouter, service: OrgResourceService<typeof agentShape.columns>): void {
  resourceRoutes(api, {
    path: '/agents',
    capability: 'operate',
    service,
    errors: { remove: { 409: ['agent_in_use'] } },
    schemas: { create: createAgentSchema, update: updateAgentSchema, list: listAgentsQuery, view: agentSchema },
  });
}
