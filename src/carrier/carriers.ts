import { UnrecoverableError } from 'bullmq';
import type { CarrierAdapter } from './carrier.js';

/** Where an organization's carrier connection is read (see `CarrierConnectionService`). */
export interface CarrierConnections {
  /** The organization's `carrier_provider`. */
  providerOf(orgId: string): Promise<string>;
}

/**
 * The carriers this deployment can reach, by provider, and each organization's: the one
 * lookup the engine, numbers and texts are given (built in `createRuntime`).
 */
export class Carriers {
  private readonly byProvider: ReadonlyMap<string, CarrierAdapter>;

  constructor(
    adapters: readonly CarrierAdapter[],
    private readonly connections: CarrierConnections,
  ) {
    this.byProvider = new Map(adapters.map((adapter) => [adapter.provider, adapter]));
  }

  /**
   * The carrier of `provider`. An unknown one is a permanent failure (a provider stored that
   * this code no longer has): retrying cannot fix it, so it is BullMQ's `UnrecoverableError`.
   */
  get(provider: string): CarrierAdapter {
    const adapter = this.byProvider.get(provider);
    if (!adapter) throw new UnrecoverableError(`unknown carrier provider ${provider}`);
    return adapter;
  }

  /** The carrier an organization is connected to. */
  async ofOrg(orgId: string): Promise<CarrierAdapter> {
    return this.get(await this.connections.providerOf(orgId));
  }
}
