import type { ApiRouter } from '../http/endpoint.js';
import type { PageParams } from '../http/pagination.js';
import {
  campaignIdParams,
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
      capability: 'operate',
      body: createCampaignSchema,
      handler: ({ actor, body }) => campaigns.create(actor, body),
    })
    .get<PageParams & { state?: string }>('/campaigns', {
      query: listCampaignsQuery,
      handler: ({ actor, query }) => campaigns.list(actor, query),
    })
    .get<unknown, { id: string }>('/campaigns/:id', {
      params: campaignIdParams,
      handler: ({ actor, params }) => campaigns.get(actor, params.id),
    })
    .patch<UpdateCampaignInput, unknown, { id: string }>('/campaigns/:id', {
      capability: 'operate',
      params: campaignIdParams,
      body: updateCampaignSchema,
      handler: ({ actor, params, body }) => campaigns.update(actor, params.id, body),
    });
}
