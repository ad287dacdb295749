/**
 * One reason a plugin was rejected (or, among `warnings`, a finding that does not refuse it).
 * `line` and `column` are 1-based; columns count code points.
 */
export interface Violation {
  rule: string;
  message: string;
  line: number;
  column: number;
}

export interface ValidationResult {
  ok: boolean;
  violations: Violation[];
  /** Present only on an accepted plugin with warnings (a name it never binds: unbound-name). */
  warnings?: Violation[];
}
