// ESLint: typescript-eslint's type-checked recommended rules over every TypeScript file that
// tsconfig.json type-checks, then eslint-config-prettier, which turns off the rules about layout
// so that they never fight Prettier. Type information comes from the `typescript` package
// (TypeScript 6.0, the JavaScript API; `tsc` itself is TypeScript 7: docs/decisions.md#tooling).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['**/dist/', 'node_modules/', '.data/'] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Deliberate exceptions:
      // - `_name` marks a parameter or binding unused on purpose, as tsc's noUnused* checks allow; a rest sibling drops a field.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // - An async function with nothing to await implements a promise-returning contract (the simulated carrier,
      //   route handlers, test stubs and polls): `async` makes its result a promise and a throw a rejection.
      '@typescript-eslint/require-await': 'off',
      // - Where (src/lib/sql.ts) renders its SQL in toString(): interpolating it into a statement is what it is for.
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        {
          allow: [
            { from: 'lib', name: ['Error', 'URL', 'URLSearchParams'] },
            { from: 'file', name: 'Where', path: 'src/lib/sql.ts' },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**'],
    rules: {
      // - Tests read untyped JSON (supertest's `res.body` is `any`) and raw SQL rows, send deliberately malformed
      //   input (`as any`), and assert with chai's property assertions (`expect(x).to.be.true`).
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unused-expressions': 'off',
    },
  },
  {
    files: ['sdk/src/generated/**'],
    rules: {
      // - @hey-api/openapi-ts writes a `oneOf` of `required` lists (`area_code` or `phone_number`) as `unknown & {...}`:
      //   the same type, and the file is compared byte for byte with the generator's output (`npm run sdk:check`).
      '@typescript-eslint/no-redundant-type-constituents': 'off',
    },
  },
  // The two configuration files (JavaScript, outside tsconfig.json): the rules that need no types.
  { files: ['**/*.js'], extends: [tseslint.configs.disableTypeChecked] },
  prettier,
);
