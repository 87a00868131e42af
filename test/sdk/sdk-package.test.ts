// The tarball of `npm pack` in sdk/, installed into an empty project as a user would install it,
// used from an ES module and from a CommonJS script (real child processes against a running
// Ringlane), and type-checked from both.
import { expect } from 'chai';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { account, packedSdk, run, runningRinglane } from './harness.js';

const require = createRequire(import.meta.url);
const tsc = join(dirname(require.resolve('typescript-native/package.json')), 'bin/tsc');
const nodeTypes = dirname(dirname(require.resolve('@types/node/package.json')));

/** The same program for both module systems: `load` is how each one gets the package. */
const program = (load: string) => `${load}
const { createHmac } = require('node:crypto');
async function main() {
  const client = new Ringlane({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY });
  const organization = await client.organization.get();
  const agents = [];
  for await (const agent of client.agents.list({ limit: 1 })) agents.push(agent.id);
  let code = 'no error';
  try {
    await client.agents.get('agt_missing');
  } catch (err) {
    code = err instanceof RinglaneError ? err.code : 'not a RinglaneError';
  }
  const body = JSON.stringify({ event: 'tenant.enabled', org_id: organization.id, occurred_at: '2026-11-24T15:03:00.000Z', tenant_id: 'ten_1' });
  const signature = 'sha256=' + createHmac('sha256', 'endpoint secret').update(body).digest('hex');
  const event = verifyWebhook(Buffer.from(body), { 'x-ringlane-signature': signature }, 'endpoint secret');
  let refused = 'accepted';
  try {
    verifyWebhook(body + ' ', { 'x-ringlane-signature': signature }, 'endpoint secret');
  } catch (err) {
    refused = err instanceof WebhookVerificationError ? err.reason : 'another error';
  }
  console.log(JSON.stringify({ organization: organization.id, agents, code, event: event.event, refused }));
}
main().catch((err) => {
  console.error(err);
  process.exit(1);
});
`;

/** Uses the types: compiles only if the package's declarations resolve and are precise (not `any`). */
const typed = (load: string) => `${load}
export async function use(client: Ringlane): Promise<string> {
  const call = await client.calls.create({ agent_id: 'agt_1', contact_id: 'con_1', simulate: { outcome: 'positive' } });
  const status: 'queued' | 'ringing' | 'in_progress' | 'completed' | 'no_answer' | 'busy' | 'failed' | 'canceled' = call.status;
  // @ts-expect-error contact_id is required
  await client.calls.create({ agent_id: 'agt_1' });
  // @ts-expect-error no such resource group
  void client.callz;
  try {
    await client.forTenant('ten_1').tenants.list();
  } catch (err) {
    if (isRinglaneError(err, 'tenant_not_found')) {
      const code: 'tenant_not_found' = err.code;
      return code;
    }
  }
  return status;
}
`;

describe('@ringlane/sdk packed: the tarball installs into an empty project and works from ESM and CommonJS', function () {
  this.timeout(90_000);
  const ringlane = runningRinglane();

  it('npm install <tarball>, then an .mjs importing it and a .cjs requiring it talk to Ringlane, and both type-check', async () => {
    const { tarball } = await packedSdk();
    const project = mkdtempSync(join(tmpdir(), 'ringlane-sdk-consumer-'));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
    // Offline: the package has no dependencies to fetch.
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: project });
    const installed = join(project, 'node_modules/@ringlane/sdk');
    expect(readdirSync(installed).sort()).to.deep.equal(['README.md', 'dist', 'package.json']);

    const org = await account({ reseller: false });
    const agent = await ringlane.client(org.key).agents.create({ name: 'Ava' });
    writeFileSync(
      join(project, 'esm.mjs'),
      program(
        `import { Ringlane, RinglaneError, WebhookVerificationError, verifyWebhook } from '@ringlane/sdk';\nimport { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);`,
      ),
    );
    writeFileSync(join(project, 'cjs.cjs'), program(`const { Ringlane, RinglaneError, WebhookVerificationError, verifyWebhook } = require('@ringlane/sdk');`));
    const env = { ...process.env, BASE_URL: ringlane.baseUrl, API_KEY: org.key };
    for (const script of ['esm.mjs', 'cjs.cjs']) {
      const { stdout } = await run(process.execPath, [script], { cwd: project, env });
      expect(JSON.parse(stdout), script).to.deep.equal({
        organization: org.id,
        agents: [agent.id],
        code: 'agent_not_found',
        event: 'tenant.enabled',
        refused: 'invalid_signature',
      });
    }
    // Each module system gets its own build: the ESM and the CommonJS files, each with its declarations.
    const { stdout: resolved } = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { createRequire } from 'node:module'; console.log(import.meta.resolve('@ringlane/sdk'), createRequire(import.meta.url).resolve('@ringlane/sdk'))`,
      ],
      { cwd: project },
    );
    expect(resolved.trim().split(' ')).to.deep.equal([`file://${installed}/dist/esm/index.js`, `${installed}/dist/cjs/index.js`]);

    writeFileSync(join(project, 'typed.mts'), typed(`import { Ringlane, isRinglaneError } from '@ringlane/sdk';`));
    writeFileSync(join(project, 'typed.cts'), typed(`import { Ringlane, isRinglaneError } from '@ringlane/sdk';`));
    const options = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--types', 'node', '--typeRoots', nodeTypes];
    await run(process.execPath, [tsc, ...options, 'typed.mts', 'typed.cts'], { cwd: project }).catch((err: { stdout: string }) => {
      throw new Error(`the consumer does not type-check:\n${err.stdout}`);
    });
  });
});
