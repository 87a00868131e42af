import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';

/**
 * Ports handed out below the kernel's ephemeral range (32768-60999 on Linux): a port from that
 * range, free when picked, may be taken by any outgoing connection before the process the test
 * starts binds it.
 */
const PORTS = { from: 20_000, to: 32_000 };

/** A free TCP port on 127.0.0.1, outside the ephemeral range (tried at random until one binds). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = PORTS.from + Math.floor(Math.random() * (PORTS.to - PORTS.from));
    const server = net.createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) continue;
    server.close();
    await once(server, 'close');
    return port;
  }
}

/** Starts a TypeScript entry point as a real process with this test run's environment. */
export function startProcess(entry: string, env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', entry], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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

/** Starts a service process (LOG_LEVEL info plus `env`); resolves once it logged its ready line. */
export async function startService(kind: ServiceKind, env: Record<string, string> = {}): Promise<Service> {
  const { entry, ready } = SERVICES[kind];
  const child = startProcess(entry, { LOG_LEVEL: 'info', ...env });
  const service: Service = { kind, child, log: [] };
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

  async start(kind: ServiceKind, env: Record<string, string> = {}): Promise<Service> {
    const service = await startService(kind, env);
    this.running.push(service);
    return service;
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
