const { availableParallelism } = require('node:os');
const builtWorkers = require('./test/built-workers');
const esmPackages = ['@nestjs', 'nodemailer', 'otplib', '@otplib', '@noble', '@scure', 'uid'];
const shared = {
  rootDir: __dirname,
  // In the checkout (node_modules is ignored by git), not the system's temporary directory:
  // the transformed Nest packages are tens of MB, and a cache is the project's.
  cacheDirectory: '<rootDir>/node_modules/.cache/jest',
  moduleFileExtensions: ['ts', 'js', 'json', 'mjs', 'cjs'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    '^.+\\.m?js$': '<rootDir>/test/esm-to-cjs.babel.js',
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmPackages.join('|')})/)`],
  testEnvironment: 'node',
  moduleNameMapper: builtWorkers.moduleNameMapper,
};
module.exports = {
  // The e2e specs run a real app on real databases with bcrypt, files side by side: on a busy
  // machine a hook's set-up (an app booted, users signed up) took more than 30 s. Nothing waits
  // on purpose; a hang still fails.
  testTimeout: 90_000,
  // Progress lines for CI, and no run left waiting on what a test left open.
  reporters: ['default', '<rootDir>/test/progress-reporter.js'],
  // Spec files run side by side on SQLite: each app has database files and a temporary
  // directory of its own, and the blocks on the one Redis database take turns
  // (describeWithTestRedis). A file spends most of its time waiting on Python, bcrypt threads
  // and API processes, so one worker more than cores. On MySQL/MariaDB (TEST_DATABASE_URL)
  // every file empties the same database: one file at a time.
  maxWorkers: process.env.TEST_DATABASE_URL ? 1 : availableParallelism() + 1,
  // `--shard` deals the files by their measured time (CI's MariaDB halves), not by a hash.
  testSequencer: '<rootDir>/test/balanced-shards.js',
  globalSetup: '<rootDir>/test/global-setup.js',
  globalTeardown: '<rootDir>/test/global-teardown.js',
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/src/**/*.spec.ts'] },
    {
      ...shared,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      // Every answer of a test app is checked against the OpenAPI document.
      setupFilesAfterEnv: ['<rootDir>/test/openapi-responses.setup.ts'],
    },
  ],
};
