import tables from './python/tables.json';

/** Stable rule ids: clients match on these, so never rename one. docs/plugin-validator.md lists them. */
export const Rule = {
  syntaxError: 'syntax-error',
  encoding: 'encoding',
  forbiddenImport: 'forbidden-import',
  relativeImport: 'relative-import',
  starImport: 'star-import',
  forbiddenName: 'forbidden-name',
  dunderAccess: 'dunder-access',
  privateAccess: 'private-access',
  moduleTampering: 'module-tampering',
  formatString: 'format-string',
  moduleAttribute: 'module-attribute',
  openWrite: 'open-write',
  fileRead: 'file-read',
  dangerousAttribute: 'dangerous-attribute',
  unsafeYamlLoad: 'unsafe-yaml-load',
  decodedCall: 'decoded-call',
  dynamicName: 'dynamic-name',
  classMachinery: 'class-machinery',
  matchPattern: 'match-pattern',
  missingDescription: 'missing-description',
  missingRun: 'missing-run',
  tooLarge: 'too-large',
  tooDeep: 'too-deep',
  analysisTooSlow: 'analysis-too-slow',
  internalError: 'internal-error',
} as const;

export type RuleId = (typeof Rule)[keyof typeof Rule];

/**
 * Refusals that are no verdict on the code: the analyser failed, or ran out of time (which
 * depends on the machine's load and the pool's timeout). Whoever keeps verdicts (the diff cache,
 * the re-check) keeps none of these and asks again later.
 */
export function isNoVerdict(rule: string): boolean {
  return rule === Rule.internalError || rule === Rule.analysisTooSlow;
}

/**
 * The version of the rules and tables (python/tables.json). Raise it with every change that may
 * refuse a plugin the previous rules accepted: at start-up, approved plugins are checked again.
 */
export const RULES_VERSION: number = tables.rules_version;

/** The analyser's own limits (python/analysis/tables.py keeps the same numbers). */
export const MAX_SOURCE_BYTES = 1024 * 1024;
export const MAX_SOURCE_LINES = 20_000;
