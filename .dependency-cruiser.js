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
      // src/config.ts is not a domain: the validated settings every layer reads (STYLE.md's layout).
      comment: 'src/lib is the shared foundation: it imports no domain, nothing from src/ but src/lib and src/config.ts.',
      from: { path: '^src/lib/' },
      to: { path: '^src/', pathNot: ['^src/lib/', '^src/config[.]ts$'] },
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
