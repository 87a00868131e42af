import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';

const run = promisify(execFile);

/**
 * A process whose pooled connection is checked out, between two statements, when its backend goes
 * away (the state a failover left a calls worker in: the backend's FATAL read while TypeORM was
 * being handed the connection). The backend is ended from another connection; then the holder
 * uses the client again, releases it, and queries through the pool.
 */
const script = `
  const { createDataSource } = await import('./src/lib/db.ts');
  // A connection to Postgres itself: behind PgBouncer (npm run test:pgbouncer) the pooler, not the client, sees the backend end.
  const source = createDataSource(process.env.DATABASE_DIRECT_URL ?? process.env.DATABASE_URL);
  await source.initialize();
  const client = await source.driver.master.connect();
  const pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  // The server sends FATAL (57P01) and closes: an 'error' on a client no statement is running on.
  const [{ ended }] = await source.query('SELECT pg_terminate_backend($1) AS ended', [pid]);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const failed = await client.query('SELECT 1').then(() => null, (err) => err.message);
  client.release(new Error('lost'));
  const [{ after }] = await source.query('SELECT 1 AS after');
  console.log(JSON.stringify({ ended, failed, after }));
  await source.destroy();`;

describe('a pooled connection lost while checked out', function () {
  this.timeout(30_000);

  it('does not end the process: its next statement fails, and the pool goes on with a new connection', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
    const { ended, failed, after } = JSON.parse(stdout);
    expect(ended, 'the backend was terminated').to.equal(true);
    expect(failed).to.match(/not queryable|terminat/);
    expect(after).to.equal(1);
  });
});
