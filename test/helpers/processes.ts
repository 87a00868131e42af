import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';

/**
 * Ports handed out below the kernel's ephemeral range (32768-60999 on Linux): a port from that
 * range, free when picked, may be taken by any outgoing connection before the process the test
 * starts binds it.
 */
const PORTS = { from: 20_000, to: 32_000 };

/**
 * Every port `freePort` handed out in this run. A port is only free until its process binds it:
 * a second pick before then (a test picks the web's port, then starts a Redis Cluster on six
 * more) could otherwise return it again, and one of the two processes fails with EADDRINUSE.
 */
const handedOut = new Set<number>();

/** A free TCP port on 127.0.0.1, outside the ephemeral range, never the same twice in a run (tried at random until one binds). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = PORTS.from + Math.floor(Math.random() * (PORTS.to - PORTS.from));
    if (handedOut.has(port)) continue;
    // Held from here: a concurrent call (`Promise.all` of several) must not pick it meanwhile.
    handedOut.add(port);
    const server = net.createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) {
      handedOut.delete(port);
      continue;
    }
    server.close();
    await once(server, 'close');
    return port;
  }
}

/**
 * Every process a test started, with the test file it belongs to (see `strayProcesses`): the one
 * on the stack that started it, or, when it was started by a helper's hook (`withCallsWorker`),
 * the file of the next test, which that hook ran for.
 */
const started = new Map<ChildProcess, { entry: string; file: string | null }>();

/** A test file's path relative to the repository, from an absolute path or a stack frame's URL. */
export function testFileOf(location: string): string | null {
  const file = location.match(/(\/[^\s:()]+\.test\.ts)/)?.[1];
  return file ? path.relative(process.cwd(), file) : null;
}

/** The test file among the callers (a helper's caller's caller, maybe); null when none is. */
function callingTestFile(): string | null {
  for (const line of (new Error().stack ?? '').split('\n')) {
    const file = testFileOf(line);
    if (file) return file;
  }
  return null;
}

/** Starts a TypeScript entry point as a real process with this test run's environment, preloaded as the Procfile's are. */
export function startProcess(entry: string, env: Record<string, string> = {}): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', './src/lib/telemetry-preload.ts', entry], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.set(child, { entry, file: callingTestFile() });
  child.once('exit', () => started.delete(child));
  return child;
}

/**
 * Processes another test file started and left running, as `currentFile`'s test begins: they
 * share the run's database and Redis prefix, so a leftover worker takes the next file's jobs and
 * deliveries (a webhooks worker without tracing, say, delivering what the tracing test waits to
 * see traced). A process its test signalled (`kill` without waiting for the exit) is given 5 s to
 * go. Each other one is SIGKILLed here, so the tests after it are not disturbed, and named, so
 * the run fails (test/helpers/root-hooks.ts). `currentFile` null: the run is ending, and whatever
 * still runs was left.
 */
export async function strayProcesses(currentFile: string | null): Promise<string[]> {
  const strays: string[] = [];
  for (const [child, owner] of started) {
    owner.file ??= currentFile;
    if (owner.file === currentFile || hasExited(child)) continue;
    if (child.killed && (await exitsWithin(child, 5000))) continue;
    strays.push(
      `${owner.entry} (pid ${child.pid}), started by ${owner.file ?? 'a hook'}, still running ${currentFile ? `when ${currentFile} began` : 'when the run ended'}`,
    );
    child.kill('SIGKILL');
    started.delete(child);
  }
  return strays;
}

/** Whether `child` exits within `ms`. */
async function exitsWithin(child: ChildProcess, ms: number): Promise<boolean> {
  if (hasExited(child)) return true;
  let timer: NodeJS.Timeout | undefined;
  const exited = await Promise.race([once(child, 'exit').then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]);
  clearTimeout(timer);
  return exited;
}

/** Resolves once `url` answers 200, polling every 50 ms for up to `timeoutMs`. */
export async function waitForHttp(url: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

/** The exit code of a process (waits for it to exit). */
export async function exitCodeOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const [code] = await once(child, 'exit');
  return code as number | null;
}

export const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** Sends `signal` and waits for the exit; a process still there after 10 s is SIGKILLed. */
export async function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (hasExited(child)) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Sends the first half of a JSON body, waits for `midway`, then the rest; resolves with status and body. */
export function slowPost(port: number, path: string, key: string, body: object, midway: () => Promise<void>) {
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': payload.length },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.write(payload.subarray(0, 10));
    midway().then(() => req.end(payload.subarray(10)), reject);
  });
}

/** Every process kind of the Procfile (but `release`): its entry point and the line it logs once it serves. */
export const SERVICES = {
  web: { entry: 'src/server.ts', ready: 'Ringlane API listening' },
  maintenance: { entry: 'workers/maintenance.ts', ready: 'worker started' },
  calls: { entry: 'workers/calls.ts', ready: 'worker started' },
  tenants: { entry: 'workers/tenants.ts', ready: 'worker started' },
  usage: { entry: 'workers/usage.ts', ready: 'worker started' },
  relay: { entry: 'workers/relay.ts', ready: 'worker started' },
  webhooks: { entry: 'workers/webhooks.ts', ready: 'worker started' },
} as const;

export type ServiceKind = keyof typeof SERVICES;

/** A running service process with the tail of what it printed (for failure messages). */
export interface Service {
  kind: ServiceKind;
  child: ChildProcess;
  log: string[];
}

export const isAlive = (service: Service) => !hasExited(service.child);

export function tailOf(service: Service): string {
  const { child } = service;
  return `--- ${service.kind} (pid ${child.pid}, exit ${child.exitCode ?? child.signalCode ?? 'running'}) ---\n${service.log.join('').slice(-3000)}`;
}

/**
 * Starts a service process (LOG_LEVEL info plus `env`); resolves once it logged its ready line.
 * `spawned` is told of it at once, before it is ready.
 */
export async function startService(kind: ServiceKind, env: Record<string, string> = {}, spawned?: (service: Service) => void): Promise<Service> {
  const { entry, ready } = SERVICES[kind];
  const child = startProcess(entry, { LOG_LEVEL: 'info', ...env });
  const service: Service = { kind, child, log: [] };
  spawned?.(service);
  const keep = (d: Buffer) => {
    service.log.push(d.toString());
    if (service.log.length > 200) service.log.splice(0, service.log.length - 200);
  };
  child.stderr!.on('data', keep);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`${kind} did not start in 20 s\n${tailOf(service)}`));
      // Not yet the caller's to stop: left running, it outlived the test run (and slowed the tests after it).
      child.kill('SIGKILL');
    }, 20_000);
    let tail = '';
    child.stdout!.on('data', (d: Buffer) => {
      keep(d);
      // A line may arrive in two chunks: look at the end of the previous one too. A chunk holds
      // many lines (the logger writes 4 KB at a time): the whole of it is searched.
      const seen = tail + d.toString();
      tail = seen.slice(-ready.length);
      if (seen.includes(ready)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${kind} exited (${code ?? signal}) before it started\n${tailOf(service)}`));
    });
  });
  return service;
}

/**
 * The service processes a test file starts: `start` records each, `stopAll` (for afterEach)
 * stops them, `tails()` is what they printed, for failure messages.
 */
export class ServiceProcesses {
  readonly running: Service[] = [];

  /**
   * Recorded as soon as it is spawned: when a start of several at once fails, the others, still
   * starting, are stopped with the rest rather than left running for the tests after (where a
   * leftover webhooks worker claims their deliveries).
   */
  start(kind: ServiceKind, env: Record<string, string> = {}): Promise<Service> {
    return startService(kind, env, (service) => this.running.push(service));
  }

  async stopAll(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    await Promise.all(this.running.splice(0).map((s) => stopProcess(s.child, signal)));
  }

  tails(): string {
    return this.running.map(tailOf).join('\n');
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` holds; on timeout the error shows `describe()` (state, logs). */
export async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number, describe: () => unknown, pollMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      const state = await describe();
      throw new Error(`${what}: not within ${timeoutMs} ms; ${typeof state === 'string' ? state : JSON.stringify(state)}`);
    }
    await sleep(pollMs);
  }
}

/** Polls `read` until `done` holds of its value; returns that value. */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms (last: ${JSON.stringify(value)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
