// `npm run test:cluster`: the test suite again, on a Redis Cluster. Starts a cluster of three
// masters of its own (redis-server with cluster mode on free loopback ports, node files in a
// temporary directory), prints its seeds, runs mocha with REDIS_CLUSTER_NODES naming them (mocha's
// own arguments pass through: `npm run test:cluster -- --grep calls`, or one file:
// `npx tsx test/cluster-pass.ts test/calls/calls.test.ts`), then stops the cluster and
// exits with mocha's code.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { onFreshPorts, PrivateRedisCluster } from './helpers/redis-server.js';

const mocha = createRequire(import.meta.url).resolve('mocha/bin/mocha.js');

async function main(): Promise<number> {
  const cluster = await onFreshPorts(() => PrivateRedisCluster.start());
  try {
    process.stdout.write(`cluster pass: a Redis Cluster of three masters, REDIS_CLUSTER_NODES=${cluster.env.REDIS_CLUSTER_NODES}\n`);
    const child = spawn(process.execPath, [mocha, ...process.argv.slice(2)], { stdio: 'inherit', env: { ...process.env, ...cluster.env } });
    // Ctrl-C reaches mocha too (same process group); the cluster is stopped once it has exited.
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
    const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
    return code ?? (signal ? 1 : 0);
  } finally {
    await cluster.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`cluster pass: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  },
);
