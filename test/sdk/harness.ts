// What the SDK tests share: the package built and packed once per run (`npm pack` in sdk/, whose
// prepack builds dist/), its ES module loaded from dist/ as a user's program would load it, and a
// running Ringlane (real processes on this run's database) for a `describe` block.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { createOrg, type TestOrg } from '../helpers/api.js';
import { freePort, ServiceProcesses, type ServiceKind } from '../helpers/processes.js';

export type Sdk = typeof import('../../sdk/src/index.js');
export type Client = InstanceType<Sdk['Ringlane']>;

export const SDK_DIR = fileURLToPath(new URL('../../sdk/', import.meta.url));
export const run = promisify(execFile);

let packing: Promise<{ sdk: Sdk; tarball: string }> | null = null;

/** The SDK as built by `npm pack` (once per test run): its ES module from dist/, and the tarball. */
export function packedSdk(): Promise<{ sdk: Sdk; tarball: string }> {
  packing ??= (async () => {
    const destination = mkdtempSync(join(tmpdir(), 'ringlane-sdk-pack-'));
    await run('npm', ['pack', '--silent', '--pack-destination', destination], { cwd: SDK_DIR });
    const [tarball] = readdirSync(destination).filter((f) => f.endsWith('.tgz'));
    const sdk = (await import(pathToFileURL(join(SDK_DIR, 'dist/esm/index.js')).href)) as Sdk;
    return { sdk, tarball: join(destination, tarball) };
  })();
  return packing;
}

/** A running Ringlane for the enclosing `describe`: the web process and `workers`, started before its tests and stopped after. */
export function runningRinglane(workers: ServiceKind[] = [], env: Record<string, string> = {}) {
  const services = new ServiceProcesses();
  const state = { baseUrl: '', port: 0, sdk: null as unknown as Sdk };
  before(async function () {
    this.timeout(90_000);
    state.port = await freePort();
    state.baseUrl = `http://127.0.0.1:${state.port}`;
    const [{ sdk }] = await Promise.all([
      packedSdk(),
      services.start('web', { ...env, PORT: String(state.port) }),
      ...workers.map((kind) => services.start(kind, env)),
    ]);
    state.sdk = sdk;
  });
  after(async function () {
    this.timeout(30_000);
    await services.stopAll();
  });
  return {
    get baseUrl() {
      return state.baseUrl;
    },
    get port() {
      return state.port;
    },
    get sdk() {
      return state.sdk;
    },
    tails: () => services.tails(),
    /** A client of the running service with `apiKey` (and any other option). */
    client(apiKey: string | undefined, options: Partial<ConstructorParameters<Sdk['Ringlane']>[0]> = {}): Client {
      return new state.sdk.Ringlane({ baseUrl: state.baseUrl, apiKey, ...options });
    },
  };
}

export type Running = ReturnType<typeof runningRinglane>;

/** An organization made by the operator (the admin API is not the SDK's), with money and rates, by default a reseller. */
export const account = (fields: Record<string, unknown> = {}): Promise<TestOrg> =>
  createOrg({ reseller: true, balance: '100.00', rates: { per_minute: '0.120000', per_text: '0.010000' }, ...fields });

/** The error `promise` rejects with (the test fails if it resolves). */
export async function rejectionOf(promise: PromiseLike<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection, got a result');
}
