// WEB_CONCURRENCY=2: one web process as a Heroku dyno runs it, a node:cluster primary and two API
// processes on one port. Which process served a request is read from its request log line (pino
// writes the pid on every line, the line carries the X-Request-Id); which connections a process
// holds, from /proc.
import { execFile, type ChildProcess } from 'node:child_process';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { getPriority } from 'node:os';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { config } from '../../src/config.js';
import { createOrg } from '../helpers/api.js';
import { exitCodeOf, freePort, hasExited, slowPost, startProcess, waitUntil } from '../helpers/processes.js';

interface LogLine {
  pid: number;
  msg: string;
  reqId?: string;
  workerPid?: number;
}

/** The web process with what it logged, line by line. */
function startWeb(env: Record<string, string>): { child: ChildProcess; lines: LogLine[]; output: () => string } {
  const child = startProcess('src/server.ts', { LOG_LEVEL: 'info', ...env });
  const lines: LogLine[] = [];
  const raw: string[] = [];
  let partial = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    raw.push(chunk.toString());
    const text = partial + chunk.toString();
    const complete = text.split('\n');
    partial = complete.pop()!;
    for (const line of complete) if (line.startsWith('{')) lines.push(JSON.parse(line) as LogLine);
  });
  child.stderr!.on('data', (chunk: Buffer) => raw.push(chunk.toString()));
  return { child, lines, output: () => raw.join('').slice(-6000) };
}

/** GET on a connection of its own (the primary hands out connections, not requests); the status. */
function getFresh(port: number, path: string, requestId: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false, headers: { 'x-request-id': requestId } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      })
      .on('error', reject);
  });
}

const byNumber = (a: number, b: number) => a - b;

/** The node processes `pid` started (tsx starts an esbuild one besides). */
const childrenOf = async (pid: number): Promise<number[]> => {
  // ps exits 1 when it lists nothing.
  const { stdout } = await promisify(execFile)('ps', ['--ppid', String(pid), '-o', 'pid=,comm=']).catch(() => ({ stdout: '' }));
  return stdout
    .split('\n')
    .map((row) => row.trim().split(/\s+/))
    .filter(([, command]) => command === 'node')
    .map(([child]) => Number(child))
    .sort(byNumber);
};

/** The remote ports of `pid`'s established TCP connections: its socket inodes, found in /proc/net/tcp{,6}. */
async function peerPortsOf(pid: number): Promise<number[]> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const socket = /^socket:\[(\d+)\]$/.exec(target);
    if (socket) inodes.add(socket[1]);
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    for (const row of (await readFile(`/proc/${pid}/net/${table}`, 'utf8')).split('\n').slice(1)) {
      // sl, local, remote, state (01: established), queues, timer, retransmits, uid, timeout, inode
      const cols = row.trim().split(/\s+/);
      if (cols.length > 9 && cols[3] === '01' && inodes.has(cols[9])) ports.push(parseInt(cols[2].split(':').pop()!, 16));
    }
  }
  return ports;
}

const niceOf = async (pid: number) => Number((await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ')[16]);
const rssOf = async (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

const POSTGRES_PORT = Number(new URL(config.databaseUrl).port || 5432);
const REDIS_PORTS = config.redis.mode === 'server' ? [Number(new URL(config.redis.url).port || 6379)] : config.redis.nodes.map((node) => node.port);

const gone = (pid: number) => {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
};

describe('the web process at WEB_CONCURRENCY=2', function () {
  this.timeout(120_000);

  it('serves from two API processes, replaces one SIGKILLed while the other answers, and on SIGTERM finishes in flight and exits 0 with them', async () => {
    const org = await createOrg();
    const port = await freePort();
    // INTAKE_NICE set: off by default, a niceness left at 0 would not show that the workers apply it.
    const web = startWeb({ PORT: String(port), WEB_CONCURRENCY: '2', INTAKE_NICE: '5' });
    const primary = web.child.pid!;
    const logged = (msg: string) => web.lines.filter((line) => line.msg === msg);
    let sent = 0;
    /** `n` GET /healthz, each on a new connection; the pids that served them, from their log lines. */
    const servedBy = async (n: number): Promise<number[]> => {
      const ids = Array.from({ length: n }, () => `wc-${sent++}`);
      for (const id of ids) expect(await getFresh(port, '/healthz', id), `${id}\n${web.output()}`).to.equal(200);
      await waitUntil('every request logged', async () => ids.every((id) => web.lines.some((l) => l.reqId === id)), 5000, web.output);
      return ids.map((id) => web.lines.find((l) => l.reqId === id)!.pid);
    };
    try {
      await waitUntil('every API process listening', async () => logged('web: every API process listening').length === 1, 60_000, web.output);
      const workers = await childrenOf(primary);
      expect(workers, web.output()).to.have.lengthOf(2);

      // Each runs the API as a single web process does, at INTAKE_NICE (a niceness can only be raised).
      for (const pid of workers) expect(await niceOf(pid), `worker ${pid}`).to.equal(Math.max(5, getPriority()));

      // Requests go to both workers, never to the primary.
      expect([...new Set(await servedBy(6))].sort(byNumber)).to.deep.equal(workers);
      // Each worker has its own Postgres and Redis connections; the primary none.
      const connected = async (pid: number) => {
        const ports = await peerPortsOf(pid);
        return [POSTGRES_PORT, ...REDIS_PORTS].every((p) => ports.includes(p));
      };
      await waitUntil(
        'each worker connected to Postgres and Redis',
        async () => (await Promise.all(workers.map(connected))).every(Boolean),
        10_000,
        web.output,
      );
      expect((await peerPortsOf(primary)).filter((p) => p === POSTGRES_PORT || REDIS_PORTS.includes(p))).to.deep.equal([]);

      // /metrics, whichever worker answers it, shows both workers' process metrics: their memory summed.
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${config.operatorToken}` } })).text();
      const rss = Number(/^ringlane_process_resident_memory_bytes (\d+)$/m.exec(metrics)?.[1]);
      const each = await Promise.all(workers.map(rssOf));
      expect(rss, metrics).to.be.greaterThan(1.5 * Math.max(...each));

      // SIGKILL one: the API keeps answering while the primary replaces it.
      const [killed, survivor] = workers;
      process.kill(killed, 'SIGKILL');
      await waitUntil(
        'the primary saw the worker die',
        async () => logged('web: an API process exited unexpectedly; replacing it').length === 1,
        10_000,
        web.output,
      );
      expect(logged('web: an API process exited unexpectedly; replacing it')[0].workerPid).to.equal(killed);
      // node:cluster stops handing it connections once its IPC channel is seen closed, which may come just after its exit.
      await new Promise((r) => setTimeout(r, 200));
      expect(await servedBy(4)).not.to.include(killed);
      let replacement = 0;
      await waitUntil(
        'a replacement worker listening',
        async () => {
          replacement = (await childrenOf(primary)).find((pid) => pid !== survivor) ?? 0;
          return replacement !== 0 && logged('Ringlane API listening').some((line) => line.pid === replacement);
        },
        60_000,
        web.output,
      );
      expect(replacement).not.to.equal(killed);
      expect([...new Set(await servedBy(6))].sort(byNumber)).to.deep.equal([survivor, replacement].sort(byNumber));

      // SIGTERM to the primary alone: the request in flight is answered, then all three exit, the primary with 0.
      const { status } = await slowPost(port, '/v1/api-keys', org.key, { label: 'in flight', permissions: ['operate'] }, async () => {
        await new Promise((r) => setTimeout(r, 200));
        web.child.kill('SIGTERM');
        await new Promise((r) => setTimeout(r, 300));
      });
      expect(status, web.output()).to.equal(201);
      await waitUntil('the primary exited', async () => hasExited(web.child), 30_000, web.output);
      expect(await exitCodeOf(web.child), web.output()).to.equal(0);
      expect([survivor, replacement].filter(gone)).to.deep.equal([survivor, replacement]);
      expect(
        logged('web: stopped cleanly')
          .map((line) => line.pid)
          .sort(byNumber),
      ).to.deep.equal([survivor, replacement].sort(byNumber));
    } finally {
      if (!hasExited(web.child)) web.child.kill('SIGKILL');
      for (const pid of await childrenOf(primary)) process.kill(pid, 'SIGKILL');
    }
  });
});

describe('the web process at WEB_CONCURRENCY=2 on a port already taken', () => {
  it('exits 1 once a worker cannot start, as one process would, instead of replacing it again and again', async function () {
    this.timeout(60_000);
    const taken = net.createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const web = startWeb({ PORT: String((taken.address() as net.AddressInfo).port), WEB_CONCURRENCY: '2' });
    try {
      await waitUntil('the web process exited', async () => hasExited(web.child), 45_000, web.output);
      expect(await exitCodeOf(web.child), web.output()).to.equal(1);
      const failed = web.lines.filter((line) => line.msg === 'the API could not start');
      expect(failed, web.output()).not.to.be.empty;
      expect(failed.every((line) => line.pid !== web.child.pid)).to.equal(true);
      expect(web.lines.filter((line) => line.msg === 'web: an API process exited while starting; stopping the others')).to.have.lengthOf(1);
      expect(web.lines.filter((line) => line.msg === 'web: an API process exited unexpectedly; replacing it')).to.deep.equal([]);
    } finally {
      web.child.kill('SIGKILL');
      taken.close();
    }
  });
});
