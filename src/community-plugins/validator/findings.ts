import type { Point } from 'web-tree-sitter';
import { MAX_REPORTED_VIOLATIONS, Rule } from './rules';
import type { Violation } from './types';

interface Finding {
  rule: string;
  message: string;
  row: number;
  /** UTF-16 code units from the line start, as tree-sitter reports for string input. */
  utf16Column: number;
}

/** Collects findings at tree-sitter positions; turns them into sorted, unique violations. */
export class Findings {
  private readonly findings: Finding[] = [];

  constructor(private readonly text: string) {}

  has(rule: string): boolean {
    return this.findings.some((finding) => finding.rule === rule);
  }

  add(rule: string, message: string, position: Point): void {
    this.findings.push({ rule, message, row: position.row, utf16Column: position.column });
  }

  /** Sorted, one per rule and position, at most MAX_REPORTED_VIOLATIONS plus a note. */
  toViolations(): Violation[] {
    const sorted = [...this.findings].sort(
      (a, b) => a.row - b.row || a.utf16Column - b.utf16Column || a.rule.localeCompare(b.rule),
    );
    const columns = new CodePointColumns(this.text);
    const violations: Violation[] = [];
    let previous: Finding | undefined;
    for (const finding of sorted) {
      // A name with several possible meanings may trip the same rule more than once.
      const duplicate =
        previous !== undefined &&
        previous.row === finding.row &&
        previous.utf16Column === finding.utf16Column &&
        previous.rule === finding.rule;
      previous = finding;
      if (duplicate) continue;
      if (violations.length === MAX_REPORTED_VIOLATIONS) {
        violations.push({
          rule: Rule.tooLarge,
          message: `More than ${MAX_REPORTED_VIOLATIONS} violations; the rest are not listed`,
          line: finding.row + 1,
          column: columns.at(finding.row, finding.utf16Column) + 1,
        });
        break;
      }
      violations.push({
        rule: finding.rule,
        message: finding.message,
        line: finding.row + 1,
        column: columns.at(finding.row, finding.utf16Column) + 1,
      });
    }
    return violations;
  }
}

/**
 * Converts tree-sitter's UTF-16 columns to code points (what editors show: in `é😀x`, x is in
 * column 3, not 4). Queries must come in document order; each line is scanned once in total,
 * so a million findings on one huge line stay linear.
 */
class CodePointColumns {
  private readonly hasSurrogates: boolean;
  private lineStart = 0;
  private row = 0;
  private scanned = 0;
  private surrogatePairs = 0;

  constructor(private readonly text: string) {
    this.hasSurrogates = /[\uD800-\uDBFF]/.test(text);
  }

  at(row: number, utf16Column: number): number {
    if (!this.hasSurrogates) return utf16Column;
    while (this.row < row) {
      const newline = this.text.indexOf('\n', this.lineStart);
      if (newline < 0) break;
      this.lineStart = newline + 1;
      this.row++;
      this.scanned = 0;
      this.surrogatePairs = 0;
    }
    for (; this.scanned < utf16Column; this.scanned++) {
      const unit = this.text.charCodeAt(this.lineStart + this.scanned);
      if (unit >= 0xd800 && unit <= 0xdbff) this.surrogatePairs++;
    }
    return utf16Column - this.surrogatePairs;
  }
}
