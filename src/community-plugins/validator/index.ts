export { validate } from './validator';
export { ValidatorBusyError, ValidatorPool } from './validator-pool';
export type { ValidationResult, Violation } from './types';
export { Rule, type RuleId } from './rules';
