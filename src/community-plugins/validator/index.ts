export { validate } from './validator';
export type { ValidationResult, Violation } from './types';
export { Rule, type RuleId } from './rules';
