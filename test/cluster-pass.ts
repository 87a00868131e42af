// `npm run test:cluster`: the test suite again, on a Redis Cluster. Starts a cluster of three
// masters of its own (redis-server with cluster mode on free loopback ports, node files in a
// temporary directory), prints its seeds, runs mocha with REDIS_CLUSTER_NODES naming them (mocha's
// own arguments pass through: `npm run test:cluster -- --grep calls`, or one file:
// `npx tsx test/cluster-pass.ts test/calls/calls.test.ts`), then stops the cluster and
// exits with mocha's code.
import { runMochaPass } from './helpers/mocha-pass.js';
import { onFreshPorts, PrivateRedisCluster } from './helpers/redis-server.js';

runMochaPass(
  'cluster pass',
  () => onFreshPorts(() => PrivateRedisCluster.start()),
  (cluster) => `a Redis Cluster of three masters, REDIS_CLUSTER_NODES=${cluster.env.REDIS_CLUSTER_NODES}`,
);
