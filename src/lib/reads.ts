import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource } from 'typeorm';
import { logger } from './logger.js';
import { redisKey, type RedisClient } from './redis.js';
import type { ReplicaMonitor, ReplicaState } from './replica.js';

/** A GET request's reads: its credential, and the server they go to once the first read chose it. */
interface ReadScope {
  credential: string;
  source?: Promise<DataSource>;
}

/** Raises the credential's mark to the WAL position given (never lowers it: writes may finish out of order), and renews its time to live. */
const RAISE_MARK = `
local current = tonumber(redis.call('GET', KEYS[1]) or '-1')
if tonumber(ARGV[1]) > current then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1`;

const markKey = (credential: string) => redisKey('replica-mark', credential);

/**
 * Where the read-heavy reads go (docs/scaling.md#read-replica): the lists, the events feed, usage
 * and the usage report, and delivery history read through `run`. Without a standby, or outside a
 * GET request of the API (a write's reads, the workers), that is the primary. Inside one, the
 * standby, if it serves (ReplicaMonitor) and has replayed the credential's last write.
 *
 * Read-your-writes: after each successful write of a credential, `wrote` records the primary's
 * WAL position at that point (after the commit) in Redis, shared by every web process, before
 * the response is sent; a read of the credential goes to the standby only when the standby has
 * replayed at least that far. The mark lives as long as a standby within the allowed lag could
 * still be behind it, with room.
 */
export class Reads {
  private readonly scopes = new AsyncLocalStorage<ReadScope>();
  private readonly markTtlMs: number;

  constructor(
    readonly primary: DataSource,
    private readonly replica: { monitor: ReplicaMonitor; redis: RedisClient } | null = null,
  ) {
    this.markTtlMs = 10 * (replica?.monitor.maxLagMs ?? 0) + 60_000;
  }

  /** What `/readyz` says of the standby. */
  get replicaState(): ReplicaState | 'not configured' {
    return this.replica?.monitor.state ?? 'not configured';
  }

  /** Runs a GET request's work for `credential`: what it reads through `run` may come from the standby. */
  scoped<T>(credential: string, work: () => Promise<T>): Promise<T> {
    return this.replica ? this.scopes.run({ credential }, work) : work();
  }

  /** Runs a read on the server this request reads from; one the standby fails is run again on the primary (as is the rest of the request's). */
  async run<T>(read: (sql: DataSource) => Promise<T>): Promise<T> {
    const scope = this.replica && this.scopes.getStore();
    if (!scope) return read(this.primary);
    const source = await (scope.source ??= this.choose(scope.credential));
    if (source === this.primary) return read(source);
    try {
      return await read(source);
    } catch (err) {
      this.replica.monitor.failed(err);
      scope.source = Promise.resolve(this.primary);
      return read(this.primary);
    }
  }

  /** After `credential`'s successful write, before its response: its reads from now on need the standby at least this far. */
  async wrote(credential: string): Promise<void> {
    if (!this.replica) return;
    const { monitor, redis } = this.replica;
    try {
      const lsn = await monitor.primaryPosition.get();
      await redis.eval(RAISE_MARK, 1, markKey(credential), lsn, this.markTtlMs);
    } catch (err) {
      // The write is committed: its answer stands. Until a later write's mark, this credential may read from a standby behind it.
      logger.warn({ err: (err as Error).message }, 'could not record the position of a write for read-your-writes');
    }
  }

  private async choose(credential: string): Promise<DataSource> {
    const { monitor, redis } = this.replica!;
    if (monitor.state !== 'ok') return this.primary;
    try {
      const mark = await redis.get(markKey(credential));
      return monitor.serves(mark === null ? 0 : Number(mark)) ? monitor.standby : this.primary;
    } catch {
      // Without the mark, the primary: it has every write.
      return this.primary;
    }
  }
}
