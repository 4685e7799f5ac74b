// Black-box tests against the real server (see scripts/test.mjs, which picks the database).
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/server/test'],
  testMatch: ['**/*.test.ts'],
  // ignoreDynamic keeps `import()` as is, for the ES-only packages (file-type, stream-json).
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs', ignoreDynamic: true } },
    ],
  },
  // The SDK's sources import with `.js` extensions (Node16 ESM-style); map them to the `.ts` files.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  cacheDirectory: '<rootDir>/.cache/jest',
  testTimeout: 60_000,
  maxWorkers: 2,
  globalSetup: '<rootDir>/server/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/server/test/support/global-teardown.ts',
};
