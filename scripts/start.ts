// `npm start`: everything in one terminal (scripts/supervisor.ts does the work).
//
// A terminal's Ctrl-C signals its whole foreground process group at once. Were the supervisor,
// the service processes and the embedded Postgres in that group, Postgres would stop at the same
// moment as the services, which lose their database while finishing their work. So this process
// runs the supervisor in a process group of its own and passes the signal on to it alone; the
// supervisor then stops the services first and Postgres last.
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
  // The supervisor stops its processes before it exits; if it was killed first, what it left
  // in its group is stopped here (an empty group is the normal case).
  try {
    process.kill(-supervisor.pid!, 'SIGTERM');
  } catch {
    // nothing was left
  }
  process.exit(code ?? (signal ? 1 : 0));
});
