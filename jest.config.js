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
};
module.exports = {
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/src/**/*.spec.ts'] },
    { ...shared, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'] },
  ],
};
