export { closeSharedValidator, validate } from './validator';
export { ValidatorBusyError, ValidatorPool, type ValidatorPoolOptions } from './validator-pool';
export type { ValidationResult, Violation } from './types';
export { isNoVerdict, Rule, RULES_VERSION, type RuleId } from './rules';
export { keptWarnings, MAX_KEPT_MESSAGE, MAX_KEPT_WARNINGS } from './warnings';
