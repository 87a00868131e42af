import { readFileSync } from 'node:fs';

/** The Procfile's process lines other than `release` (the one-off migration step), in file order. */
export function procfileProcesses(projectDir: string): Array<{ name: string; command: string }> {
  return readFileSync(`${projectDir}/Procfile`, 'utf8')
    .split('\n')
    .map((line) => /^([A-Za-z0-9_-]+):\s*(.+)$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null && m[1] !== 'release')
    .map((m) => ({ name: m[1], command: m[2] }));
}
