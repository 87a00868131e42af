// dependency-cruiser (`npm run lint:deps`): the import graph of src, workers and scripts, by
// TypeScript's own resolution (tsconfig.json; `./x.js` specifiers name `./x.ts`). Type-only
// imports count: a cycle through `import type` is still a cycle between modules.
/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No module imports itself through others: each layer depends only on those below it.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'lib-imports-no-domain',
      severity: 'error',
      comment: 'src/lib is the shared foundation: it imports nothing from src/ outside src/lib.',
      from: { path: '^src/lib/' },
      to: { path: '^src/', pathNot: '^src/lib/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Packages' `exports` maps, read as Node reads them for an ESM import (got publishes only those).
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'node', 'default'] },
  },
};
