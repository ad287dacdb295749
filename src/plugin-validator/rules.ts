import profile from './python/profile.json';

/**
 * Stable rule ids: clients match on these, so never rename one. They are the headings of
 * docs/plugin-profile.md (each with a before/after example). `unbound-name` is a warning only.
 */
export const Rule = {
  syntaxError: 'syntax-error',
  encoding: 'encoding',
  tooLarge: 'too-large',
  tooDeep: 'too-deep',
  analysisTooSlow: 'analysis-too-slow',
  internalError: 'internal-error',
  profileSyntax: 'profile-syntax',
  forbiddenImport: 'forbidden-import',
  importPosition: 'import-position',
  relativeImport: 'relative-import',
  starImport: 'star-import',
  moduleAttribute: 'module-attribute',
  forbiddenName: 'forbidden-name',
  dunderAccess: 'dunder-access',
  privateAccess: 'private-access',
  reservedAttribute: 'reserved-attribute',
  typeAttribute: 'type-attribute',
  untypedAttribute: 'untyped-attribute',
  attributeStore: 'attribute-store',
  itemStore: 'item-store',
  moduleTampering: 'module-tampering',
  libraryCall: 'library-call',
  libraryValue: 'library-value',
  restrictedValue: 'restricted-value',
  formatString: 'format-string',
  superCall: 'super-call',
  classMachinery: 'class-machinery',
  matchPattern: 'match-pattern',
  decodedCall: 'decoded-call',
  missingDescription: 'missing-description',
  missingRun: 'missing-run',
  unboundName: 'unbound-name',
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
 * The version of the plugin profile (python/profile.json). Raise it with every change that may
 * refuse a plugin the previous rules accepted: at start-up, approved plugins are checked again.
 */
export const RULES_VERSION: number = profile.rules_version;

/** The analyser's own limits (python/analysis/table.py keeps the same numbers). */
export const MAX_SOURCE_BYTES = 1024 * 1024;
export const MAX_SOURCE_LINES = 20_000;
