import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { config, type RedisTarget } from '../../src/config.js';
import { freePort, stopProcess } from './processes.js';

const run = promisify(execFile);

/** One raw command to 127.0.0.1:`port`; resolves with the reply, or null when nothing answers. */
function ask(port: number, command: string): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let reply = '';
    const done = (value: string | null) => {
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(1000);
    socket.once('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (d) => {
      reply += d.toString();
      // A status line (+PONG) or a whole bulk string ($<n>\r\n<n bytes>\r\n).
      const bulk = /^\$(\d+)\r\n/.exec(reply);
      if (reply.startsWith('+') || reply.startsWith('-') || (bulk && Buffer.byteLength(reply) >= bulk[0].length + Number(bulk[1]) + 2)) done(reply);
    });
    socket.once('error', () => done(null));
    socket.once('timeout', () => done(null));
  });
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A redis-server process on a port, without persistence of data: killed and started again, it is empty. */
class RedisServerProcess {
  private child: ChildProcess | null = null;

  constructor(
    readonly port: number,
    private readonly extraArgs: string[] = [],
  ) {}

  /** Starts redis-server (empty) on this port; resolves once it answers PING. */
  async start(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', ...this.extraArgs];
    const child = spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr.resume();
    this.child = child;
    await until(`redis-server on ${this.port} answers`, async () => {
      if (child.exitCode !== null) throw new Error(`redis-server on ${this.port} exited with ${child.exitCode}`);
      return (await ask(this.port, 'PING')) === '+PONG\r\n';
    });
  }

  /** SIGKILL: the server dies as in a crash, with everything it held. */
  async kill(): Promise<void> {
    if (this.child) await stopProcess(this.child, 'SIGKILL');
    this.child = null;
  }
}

/**
 * A Redis of a test's own, never the machine's own on 6379: killed and started again, it comes
 * back empty, as a Redis restarted without persistence or failed over to an empty replica does.
 */
export interface PrivateRedis {
  /** What createRedis takes to connect to it. */
  readonly target: RedisTarget;
  /** The environment that points a service process at it. */
  readonly env: Record<string, string>;
  /** SIGKILL, as in a crash. */
  kill(): Promise<void>;
  /** Starts it again, empty; resolves once it serves. */
  restart(): Promise<void>;
  /** Kills it and removes what it left on disk. */
  stop(): Promise<void>;
}

/** One redis-server. */
export class PrivateRedisServer implements PrivateRedis {
  private constructor(private readonly server: RedisServerProcess) {}

  static async start(): Promise<PrivateRedisServer> {
    const redis = new PrivateRedisServer(new RedisServerProcess(await freePort()));
    await redis.restart();
    return redis;
  }

  get target(): RedisTarget {
    return { mode: 'server', url: `redis://127.0.0.1:${this.server.port}` };
  }

  get env(): Record<string, string> {
    return { REDIS_URL: `redis://127.0.0.1:${this.server.port}`, REDIS_CLUSTER_NODES: '' };
  }

  restart = () => this.server.start();
  kill = () => this.server.kill();
  stop = () => this.server.kill();
}

/**
 * A Redis Cluster of three masters (no replicas) on free loopback ports, its node files in a
 * temporary directory. Killed, every master dies; restarted, each comes back empty with its
 * node file, so the cluster is whole again, as after a restart of a cluster without persistence.
 */
export class PrivateRedisCluster implements PrivateRedis {
  private constructor(
    private readonly dir: string,
    private readonly masters: RedisServerProcess[],
  ) {}

  static async start(): Promise<PrivateRedisCluster> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ringlane-redis-cluster-'));
    const masters: RedisServerProcess[] = [];
    for (let i = 0; i < 3; i++) {
      const [port, busPort] = [await freePort(), await freePort()];
      masters.push(
        new RedisServerProcess(port, [
          '--cluster-enabled',
          'yes',
          '--cluster-port',
          String(busPort),
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--dir',
          dir,
        ]),
      );
    }
    const cluster = new PrivateRedisCluster(dir, masters);
    try {
      await Promise.all(masters.map((m) => m.start()));
      await run('redis-cli', ['--cluster', 'create', ...cluster.seeds(), '--cluster-replicas', '0', '--cluster-yes']);
      await cluster.untilOk();
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  private seeds(): string[] {
    return this.masters.map((m) => `127.0.0.1:${m.port}`);
  }

  /** Every master says `cluster_state:ok`: all slots are served and the nodes see each other. */
  private untilOk(): Promise<void> {
    return until(
      'the Redis Cluster is ok',
      async () => (await Promise.all(this.masters.map((m) => ask(m.port, 'CLUSTER INFO')))).every((info) => info?.includes('cluster_state:ok')),
      30_000,
    );
  }

  get target(): RedisTarget {
    return { mode: 'cluster', nodes: this.masters.map((m) => ({ host: '127.0.0.1', port: m.port })) };
  }

  get env(): Record<string, string> {
    return { REDIS_CLUSTER_NODES: this.seeds().join(',') };
  }

  async restart(): Promise<void> {
    await Promise.all(this.masters.map((m) => m.start()));
    await this.untilOk();
  }

  async kill(): Promise<void> {
    await Promise.all(this.masters.map((m) => m.kill()));
  }

  async stop(): Promise<void> {
    await this.kill();
    await rm(this.dir, { recursive: true, force: true });
  }
}

/**
 * Starts a private Redis, on other free ports when a server exits at start: a port free when
 * picked can be taken before redis-server binds it (another test run, an outgoing connection).
 */
export async function onFreshPorts<R>(start: () => Promise<R>, attempts = 5): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= attempts || !/exited with/.test((err as Error).message)) throw err;
    }
  }
}

/** A Redis of the test's own, of the kind this run uses: one server, or in the cluster pass a cluster. */
export const startPrivateRedis = (): Promise<PrivateRedis> =>
  onFreshPorts<PrivateRedis>(() => (config.redis.mode === 'cluster' ? PrivateRedisCluster.start() : PrivateRedisServer.start()));
