import js from '@eslint/js';
import jest from 'eslint-plugin-jest';
import tseslint from 'typescript-eslint';

/**
 * Module boundaries (docs/architecture.md, "Module layout"). Feature folders of src/, each one Nest module;
 * the foundations (common, config, database, metrics) and users sit below them.
 */
const FEATURES = [
  'account',
  'account-logins',
  'admin-cli',
  'audit',
  'auth',
  'community-plugins',
  'configuration',
  'health',
  'mail',
  'outbox',
  'pages',
  'plugin-test-runs',
  'rate-limit',
  'second-factor',
  'sessions',
  'targets',
  'users',
];
/** An import of any of `folders` (or of the composition roots) by a relative path from inside src/. */
const importOf = (folders) =>
  `^(\\.\\./)+(${folders.join('|')}|app\\.module|schema-upgraded-entities)(/.*)?$`;
const foundationsImportNoFeature = (files, folders, message) => ({
  files,
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            regex: importOf(folders),
            message,
          },
        ],
      },
    ],
  },
});

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'data/**',
      '**/*.js',
      '**/*.mjs',
      'test/fixtures/**',
      // Generated from the OpenAPI document (npm run openapi).
      'test/openapi-client/schema.d.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  foundationsImportNoFeature(
    ['src/common/**/*.ts', 'src/config/**/*.ts', 'src/database/**/*.ts', 'src/metrics/**/*.ts'],
    FEATURES,
    'src/common, src/config, src/database and src/metrics import no feature module: features depend on them, never the other way round.',
  ),
  {
    // The plugin validator and the test-run jail are libraries (one entry point, their Python
    // beside them): no feature and no Nest inside, so the API, svc-admin and the scripts use
    // the same program.
    files: ['src/plugin-validator/**/*.ts', 'src/plugin-jail/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: importOf(FEATURES),
              message:
                'src/plugin-validator and src/plugin-jail import no feature module: features use them, never the other way round.',
            },
            {
              regex: '^@nestjs/',
              message: 'src/plugin-validator and src/plugin-jail are libraries: no Nest inside.',
            },
          ],
        },
      ],
    },
  },
  foundationsImportNoFeature(
    ['src/users/**/*.ts'],
    FEATURES.filter((feature) => feature !== 'users'),
    'The users module, shared by the API and svc-admin, imports no other feature: they depend on it.',
  ),
  {
    // Data access goes through each feature's repository (*.repository.ts): services and the
    // rest never hold the DataSource, a TypeORM Repository or a query builder, and no feature
    // uses another feature's entity but as a type (its tables are reached through that
    // feature's exported repository or service).
    files: ['src/**/*.ts'],
    ignores: [
      'src/database/**',
      'src/**/*.repository.ts',
      'src/**/*.spec.ts',
      'src/health/health.controller.ts',
    ],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'typeorm',
              importNames: ['DataSource', 'Repository', 'SelectQueryBuilder', 'QueryBuilder', 'Brackets'],
              message:
                'Queries belong in the feature’s repository (*.repository.ts); start transactions with Transactions.',
            },
            {
              name: '@nestjs/typeorm',
              importNames: ['InjectRepository', 'InjectDataSource'],
              message:
                'Queries belong in the feature’s repository (*.repository.ts); start transactions with Transactions.',
            },
          ],
          patterns: [
            {
              // `../shared/` is the marketplace's own entities, seen from one of its concern folders.
              regex: '^(\\.\\./)+(?!shared/)[^./][^/]*/([^/]+/)*[^/]+\\.entity$',
              allowTypeImports: true,
              message:
                'Another feature’s entity is its table: go through that feature’s exported repository or service (a type import is fine).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.spec.ts', '**/*.e2e-spec.ts', 'test/**/*.ts'],
    ...jest.configs['flat/recommended'],
    rules: {
      ...jest.configs['flat/recommended'].rules,
      // Tests assert through expect, helpers named expect*, supertest's .expect and fast-check.
      'jest/expect-expect': [
        'error',
        { assertFunctionNames: ['expect', 'expect*', 'fc.assert', 't.**.expect'] },
      ],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
