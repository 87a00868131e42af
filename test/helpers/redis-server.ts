import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { freePort, stopProcess } from './processes.js';

function pingRedis(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(500);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => {
      socket.destroy();
      resolve(d.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/**
 * A redis-server of the test's own on a free port (never the machine's own on 6379), without
 * persistence: killed and started again, it comes back empty, as a Redis restarted without
 * persistence or failed over to an empty replica does.
 */
export class PrivateRedis {
  private child: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.restart();
    return redis;
  }

  /** Starts redis-server (empty) on this port; resolves once it answers PING. */
  async restart(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr!.resume();
    this.child = child;
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`redis-server on ${this.port} exited with ${child.exitCode}`);
      if (await pingRedis(this.port)) return;
      if (Date.now() > deadline) throw new Error(`redis-server on ${this.port} did not answer`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** SIGKILL: the server dies as in a crash, with everything it held. */
  async kill(): Promise<void> {
    if (this.child) await stopProcess(this.child, 'SIGKILL');
    this.child = null;
  }
}
