import { UnrecoverableError } from 'bullmq';
import type { CarrierAdapter } from './carrier.js';

/** Where an organization's carrier connection is read (see `CarrierConnectionService`). */
export interface CarrierConnections {
  providerOf(orgId: string): Promise<string>;
}

/** Every reachable carrier by provider, and each organization's: the one lookup engine, numbers and texts get. */
export class Carriers {
  private readonly byProvider: ReadonlyMap<string, CarrierAdapter>;

  constructor(
    adapters: readonly CarrierAdapter[],
    private readonly connections: CarrierConnections,
  ) {
    this.byProvider = new Map(adapters.map((adapter) => [adapter.provider, adapter]));
  }

  /** An unknown provider (stored, but no longer in this code) is `UnrecoverableError`: a retry cannot fix it. */
  get(provider: string): CarrierAdapter {
    const adapter = this.byProvider.get(provider);
    if (!adapter) throw new UnrecoverableError(`unknown carrier provider ${provider}`);
    return adapter;
  }

  async ofOrg(orgId: string): Promise<CarrierAdapter> {
    return this.get(await this.connections.providerOf(orgId));
  }
}
