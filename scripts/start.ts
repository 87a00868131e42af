// `npm start`: everything in one terminal (scripts/supervisor.ts does the work). Ctrl-C signals the
// whole foreground group at once, so the supervisor runs in a group of its own and gets the signal
// alone: it stops the services first and Postgres last.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const self = fileURLToPath(import.meta.url);
const supervisorEntry = path.join(path.dirname(self), `supervisor${path.extname(self)}`);
const supervisor = spawn(process.execPath, [...process.execArgv, supervisorEntry], {
  detached: true,
  // The IPC channel tells the supervisor if this process dies without passing a signal on.
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => supervisor.kill(signal));

supervisor.on('error', (err) => {
  process.stderr.write(`[start] cannot run the supervisor: ${err.message}\n`);
  process.exit(1);
});
supervisor.on('exit', (code, signal) => {
  // If the supervisor was killed first, stop what it left in its group (usually nothing).
  try {
    process.kill(-supervisor.pid!, 'SIGTERM');
  } catch {
    // nothing was left
  }
  process.exit(code ?? (signal ? 1 : 0));
});
