import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';

const mocha = createRequire(import.meta.url).resolve('mocha/bin/mocha.js');

/** What a pass runs the suite on: the environment that points the tests at it, and how to stop it. */
export interface PassTarget {
  env: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * The entry of a pass over the test suite on servers of its own (`npm run test:cluster`,
 * `npm run test:pgbouncer`): starts them, says what they are, runs mocha with the environment
 * that names them (mocha's own arguments pass through: `-- --grep calls`, or a file), then stops
 * them and exits with mocha's code.
 */
export function runMochaPass(name: string, start: () => Promise<PassTarget>, describe: (target: PassTarget) => string): void {
  const main = async (): Promise<number> => {
    const target = await start();
    try {
      process.stdout.write(`${name}: ${describe(target)}\n`);
      const child = spawn(process.execPath, [mocha, ...process.argv.slice(2)], { stdio: 'inherit', env: { ...process.env, ...target.env } });
      // Ctrl-C reaches mocha too (same process group); the servers are stopped once it has exited.
      for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
      const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
      return code ?? (signal ? 1 : 0);
    } finally {
      await target.stop();
    }
  };
  main().then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`${name}: ${(err as Error).stack ?? err}\n`);
      process.exit(1);
    },
  );
}
