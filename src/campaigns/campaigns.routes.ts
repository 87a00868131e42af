import type { ApiRouter } from '../http/endpoint.js';
import { pageOf } from '../http/pagination.js';
import { type PageParams } from '../lib/pagination.js';
import {
  campaignIdParams,
  campaignSchema,
  createCampaignSchema,
  listCampaignsQuery,
  updateCampaignSchema,
  type CreateCampaignInput,
  type UpdateCampaignInput,
} from './campaigns.schemas.js';
import type { CampaignsService } from './campaigns.service.js';

export function campaignRoutes(api: ApiRouter, campaigns: CampaignsService): void {
  api
    .post<CreateCampaignInput>('/campaigns', {
      summary: 'Create a campaign',
      errors: { 404: ['agent_not_found', 'contact_not_found'] },
      capability: 'operate',
      body: createCampaignSchema,
      response: campaignSchema,
      handler: ({ actor, body }) => campaigns.create(actor, body),
    })
    .get<PageParams & { state?: string }>('/campaigns', {
      summary: 'List campaigns',
      query: listCampaignsQuery,
      response: pageOf(campaignSchema),
      handler: ({ actor, query }) => campaigns.list(actor, query),
    })
    .get<unknown, { id: string }>('/campaigns/:id', {
      summary: 'Read a campaign',
      params: campaignIdParams,
      response: campaignSchema,
      handler: ({ actor, params }) => campaigns.get(actor, params.id),
    })
    .patch<UpdateCampaignInput, unknown, { id: string }>('/campaigns/:id', {
      summary: 'Change a campaign, or move it to another state',
      errors: { 409: ['invalid_state_transition'] },
      capability: 'operate',
      params: campaignIdParams,
      response: campaignSchema,
      body: updateCampaignSchema,
      handler: ({ actor, params, body }) => campaigns.update(actor, params.id, body),
    });
}
