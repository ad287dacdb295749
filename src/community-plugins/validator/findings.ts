import type { Point } from 'web-tree-sitter';
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

  get count(): number {
    return this.findings.length;
  }

  add(rule: string, message: string, position: Point): void {
    this.findings.push({ rule, message, row: position.row, utf16Column: position.column });
  }

  toViolations(): Violation[] {
    const lineStarts = this.findings.length > 0 ? lineStartOffsets(this.text) : [];
    const unique = new Map<string, Violation>();
    for (const finding of this.findings) {
      const violation: Violation = {
        rule: finding.rule,
        message: finding.message,
        line: finding.row + 1,
        column: this.codePointColumn(lineStarts, finding.row, finding.utf16Column) + 1,
      };
      const key = `${violation.line}:${violation.column}:${violation.rule}:${violation.message}`;
      if (!unique.has(key)) unique.set(key, violation);
    }
    return sortViolations([...unique.values()]);
  }

  /** Editors count characters, not UTF-16 units: `é😀x` puts x in column 3, not 4. */
  private codePointColumn(lineStarts: number[], row: number, utf16Column: number): number {
    const lineStart = lineStarts[row];
    if (lineStart === undefined) return utf16Column;
    const prefix = this.text.slice(lineStart, lineStart + utf16Column);
    let surrogatePairs = 0;
    for (let index = 0; index < prefix.length; index++) {
      const unit = prefix.charCodeAt(index);
      if (unit >= 0xd800 && unit <= 0xdbff) surrogatePairs++;
    }
    return utf16Column - surrogatePairs;
  }
}

export function sortViolations(violations: Violation[]): Violation[] {
  return violations.sort(
    (a, b) => a.line - b.line || a.column - b.column || a.rule.localeCompare(b.rule),
  );
}

function lineStartOffsets(text: string): number[] {
  const starts = [0];
  for (let index = text.indexOf('\n'); index >= 0; index = text.indexOf('\n', index + 1)) {
    starts.push(index + 1);
  }
  return starts;
}
