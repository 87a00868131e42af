import type { DataSource } from 'typeorm';
import { createDataSource, pgCode } from './db.js';
import { logger } from './logger.js';
import { SharedRead } from './shared-read.js';

/** What `/readyz` says of the standby: `ok` (reads may go to it), `lagging` or `down` (reads go to the primary). */
export type ReplicaState = 'ok' | 'lagging' | 'down';

/** How often each web process probes the standby (and reads the primary's WAL position). */
const PROBE_MS = 500;

/** How long opening a connection to the standby may take: a host that does not answer is down, not a hang of every list. */
const CONNECT_TIMEOUT_MS = 2000;

/** A WAL position as a number of bytes (exact below 2^53 bytes, 9 PB of WAL). */
const lsnOf = (expression: string) => `(${expression} - '0/0'::pg_lsn)::bigint::text`;
const CURRENT_LSN = `SELECT ${lsnOf('pg_current_wal_lsn()')} AS lsn`;
/** Null when the server is not in recovery: not a standby, or promoted (its replay position then stays where recovery ended). */
const REPLAYED_LSN = `SELECT CASE WHEN pg_is_in_recovery() THEN ${lsnOf('pg_last_wal_replay_lsn()')} END AS lsn`;

/** A WAL position of the primary and when a probe first saw the primary at (or past) it. */
interface Sample {
  lsn: number;
  at: number;
}

/** An error of the connection rather than of the statement: no SQLSTATE, or class 08 (connection) / 57 (operator intervention: shutdown, recovery). */
const isConnectionError = (err: unknown): boolean => {
  const code = pgCode(err);
  return code === undefined || code.startsWith('08') || code.startsWith('57');
};

/**
 * The streaming standby of the web process (docs/scaling.md#read-replica): its DataSource, and a
 * probe every PROBE_MS that reads how far it has replayed and how far behind the primary it is.
 *
 * Lag is time, measured on the primary's WAL: the probe notes when it first saw the primary at
 * each new position; the standby's lag is the age of the oldest noted position it has not yet
 * replayed, and 0 when it has replayed all of them (an idle primary with the standby caught up is
 * lag 0, however long since the last commit). The standby serves reads while it answers, is in
 * recovery and lags by at most `maxLagMs`; the state is logged when it changes.
 */
export class ReplicaMonitor {
  readonly standby: DataSource;
  /** The primary's current WAL position, read after the call (concurrent callers share one read). */
  readonly primaryPosition: SharedRead<number>;
  private current: ReplicaState = 'down';
  private replayed = -1;
  private samples: Sample[] = [];
  private timer: NodeJS.Timeout | null = null;
  private probing: Promise<void> = Promise.resolve();
  /** Enough samples to cover the largest lag told apart (`maxLagMs`) with room; older ones are thinned. */
  private readonly maxSamples: number;

  constructor(
    primary: DataSource,
    url: string,
    readonly maxLagMs: number,
  ) {
    this.standby = createDataSource(url, { connectTimeoutMs: CONNECT_TIMEOUT_MS });
    this.primaryPosition = new SharedRead(async () => Number((await primary.query<Array<{ lsn: string }>>(CURRENT_LSN))[0].lsn));
    this.maxSamples = Math.ceil(maxLagMs / PROBE_MS) + 100;
  }

  get state(): ReplicaState {
    return this.current;
  }

  /** Whether reads that must see WAL position `lsn` may go to the standby. */
  serves(lsn: number): boolean {
    return this.current === 'ok' && this.replayed >= lsn;
  }

  /** The first probe, then one every PROBE_MS. Resolves after the first probe: the state is known before the API serves. */
  async start(): Promise<void> {
    await this.probe();
    this.timer = setInterval(() => {
      this.probing = this.probing.then(() => this.probe());
    }, PROBE_MS);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.probing;
    if (this.standby.isInitialized) await this.standby.destroy();
  }

  /** A read on the standby failed: a connection's failure takes it out at once, until a probe finds it back. */
  failed(err: unknown): void {
    if (isConnectionError(err)) this.become('down', { reason: (err as Error).message });
  }

  private async probe(): Promise<void> {
    try {
      // Connected lazily and again after each failure: a standby down when the API starts is not its failure.
      if (!this.standby.isInitialized) await this.standby.initialize();
      const [primaryLsn, [replay]] = await Promise.all([this.primaryPosition.get(), this.standby.query<Array<{ lsn: string | null }>>(REPLAYED_LSN)]);
      if (replay.lsn === null) return this.become('down', { reason: 'not a standby (not in recovery)' });
      this.replayed = Number(replay.lsn);
      const lagMs = this.lagMs(primaryLsn, Date.now());
      this.become(lagMs > this.maxLagMs ? 'lagging' : 'ok', { lagMs, maxLagMs: this.maxLagMs });
    } catch (err) {
      this.become('down', { reason: (err as Error).message });
    }
  }

  private lagMs(primaryLsn: number, now: number): number {
    const last = this.samples[this.samples.length - 1];
    if (!last || primaryLsn > last.lsn) this.samples.push({ lsn: primaryLsn, at: now });
    while (this.samples.length > 0 && this.samples[0].lsn <= this.replayed) this.samples.shift();
    // The oldest is kept (the lag is its age): thinning the ones after it only blurs lags far past maxLagMs.
    if (this.samples.length > this.maxSamples) this.samples.splice(1, 1);
    return this.samples.length === 0 ? 0 : now - this.samples[0].at;
  }

  private become(state: ReplicaState, details: Record<string, unknown>): void {
    if (state === this.current) return;
    this.current = state;
    if (state === 'ok') logger.info(details, 'read replica serves reads');
    else logger.warn(details, `read replica ${state}: reads go to the primary`);
  }
}
