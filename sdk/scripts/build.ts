/**
 * Builds dist/ (`npm run build` in sdk/, also before `npm pack`): ES modules in dist/esm and
 * CommonJS in dist/cjs, each with its `.d.ts`, compiled by the repository's TypeScript (the
 * native `tsc` that the root build runs). Each half gets a package.json naming its module kind,
 * so Node and TypeScript read dist/cjs as CommonJS inside this `type: module` package.
 */
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SDK = fileURLToPath(new URL('..', import.meta.url));
const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript-native/package.json')), 'bin/tsc');

rmSync(join(SDK, 'dist'), { recursive: true, force: true });
for (const [config, type] of [
  ['tsconfig.esm.json', 'module'],
  ['tsconfig.cjs.json', 'commonjs'],
] as const) {
  execFileSync(process.execPath, [tsc, '-p', join(SDK, config)], { stdio: 'inherit' });
  const out = join(SDK, 'dist', type === 'module' ? 'esm' : 'cjs');
  writeFileSync(join(out, 'package.json'), `${JSON.stringify({ type }, null, 2)}\n`);
}
