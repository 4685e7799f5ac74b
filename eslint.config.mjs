// `npm run lint` (with dependency-cruiser, .dependency-cruiser.cjs): typescript-eslint's
// type-aware recommended rules over the server's and the SDK's sources, with the exceptions below.
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/generated/**', 'server/test/fixtures/**', 'node_modules/**', '.cache/**', 'examples/**'] },
  {
    files: ['server/src/**/*.ts', 'sdk/src/**/*.ts'],
    extends: [eslint.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Operation handlers are async by their interface, whether or not a given one awaits.
      '@typescript-eslint/require-await': 'off',
      // `a && b()` and `(x = y, f(x))` are used as statements, sparingly, on purpose.
      '@typescript-eslint/no-unused-expressions': ['error', { allowShortCircuit: true, allowTernary: true }],
      // Type-level code spells "no keys" as `{}` (openapi-fetch's `P extends {}` among them).
      '@typescript-eslint/no-empty-object-type': ['error', { allowObjectTypes: 'always' }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
);
