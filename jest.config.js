const builtWorkers = require('./test/built-workers');
const esmPackages = ['@nestjs', 'nodemailer', 'otplib', '@otplib', '@noble', '@scure', 'uid'];
const shared = {
  rootDir: __dirname,
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
  // The e2e specs run a real app on real databases with bcrypt: on a busy machine a hook's
  // set-up can take more than Jest's default 5 s. Nothing waits on purpose; a hang still fails.
  testTimeout: 30_000,
  globalSetup: '<rootDir>/test/built-workers.js',
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
