import type { Parser } from 'web-tree-sitter';
import { AnalysisTimeoutError, Deadline } from './deadline';
import { decodeSource } from './encoding';
import { Findings } from './findings';
import { checkModuleContract } from './module-contract';
import { getPythonParser, withSyntaxTree } from './parser';
import { ANALYSIS_BUDGET_MS, Rule } from './rules';
import type { ValidationResult, Violation } from './types';
import { checkSyntaxTree } from './walker';

/**
 * Statically validates an uploaded Python plugin. Never throws and never accepts what it could
 * not fully check: every failure, including its own, becomes a violation.
 */
export async function validate(source: Buffer): Promise<ValidationResult> {
  try {
    const decoded = decodeSource(source);
    if (!decoded.ok) return result(decoded.violations);
    const parser = await getPythonParser();
    // The budget starts after the grammar has loaded: a cold start is not the plugin's fault.
    return result(validateText(parser, decoded.text, new Deadline(ANALYSIS_BUDGET_MS)));
  } catch (error) {
    if (error instanceof AnalysisTimeoutError) {
      return result([violation(Rule.tooLarge, `Plugin took longer than ${error.budgetMs} ms to validate`)]);
    }
    // No details: they would tell an uploader about the server, and help nobody fix a plugin.
    return result([violation(Rule.internalError, 'Validator failed internally; plugin rejected')]);
  }
}

function validateText(parser: Parser, text: string, deadline: Deadline): Violation[] {
  return withSyntaxTree(parser, text, deadline, (tree) => {
    const findings = new Findings(text);
    checkSyntaxTree(tree, text, findings, deadline);
    checkModuleContract(text, tree.rootNode, findings);
    if (tree.rootNode.hasError && !findings.has(Rule.syntaxError)) {
      // Defensive: tree-sitter saw an error the walk did not locate.
      findings.add(Rule.syntaxError, 'Syntax error: invalid Python', { row: 0, column: 0 });
    }
    return findings.toViolations();
  });
}

/** `violations` arrive sorted by line and column. */
function result(violations: Violation[]): ValidationResult {
  return { ok: violations.length === 0, violations };
}

function violation(rule: string, message: string): Violation {
  return { rule, message, line: 1, column: 1 };
}
