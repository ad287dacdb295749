/** One reason a plugin was rejected. `line` and `column` are 1-based; columns count code points. */
export interface Violation {
  rule: string;
  message: string;
  line: number;
  column: number;
}

export interface ValidationResult {
  ok: boolean;
  violations: Violation[];
}
