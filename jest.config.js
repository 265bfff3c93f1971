/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j)sx?$': '@swc/jest' },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['**/test/**/*.test.ts'],
  testTimeout: 30000,
  // On 2 cores jest runs the files in its own process; a handle some file leaves open (under investigation)
  // must not keep CI waiting after the last test has reported.
  forceExit: true,
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
};
