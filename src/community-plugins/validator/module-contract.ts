import type { Node } from 'web-tree-sitter';
import type { Findings } from './findings';
import { identifierName, isStrLiteral } from './python-syntax';
import { Rule } from './rules';

export const MISSING_DESCRIPTION_MESSAGE = 'Plugin must define a top-level DESCRIPTION string';
export const MISSING_RUN_MESSAGE =
  'Plugin must define a top-level function run(PluginInfo) with one positional parameter';

/** The framework loads a plugin by reading DESCRIPTION and calling run(plugin_info). */
export function checkModuleContract(source: string, module: Node, findings: Findings): void {
  let hasDescription = false;
  let hasRun = false;
  for (const statement of module.namedChildren) {
    hasDescription ||= isDescriptionAssignment(source, statement);
    hasRun ||= isRunDefinition(source, statement);
  }
  const start = { row: 0, column: 0 };
  if (!hasDescription) findings.add(Rule.missingDescription, MISSING_DESCRIPTION_MESSAGE, start);
  if (!hasRun) findings.add(Rule.missingRun, MISSING_RUN_MESSAGE, start);
}

/** `DESCRIPTION = "..."`, optionally annotated, concatenated or parenthesised. */
function isDescriptionAssignment(source: string, statement: Node): boolean {
  if (statement.type !== 'expression_statement') return false;
  const assignment = statement.firstNamedChild;
  if (assignment?.type !== 'assignment') return false;
  const target = assignment.childForFieldName('left');
  const value = assignment.childForFieldName('right');
  if (target?.type !== 'identifier' || identifierName(source, target) !== 'DESCRIPTION') {
    return false;
  }
  return value !== null && isStringValue(source, value);
}

function isStringValue(source: string, node: Node): boolean {
  let value = node;
  // A loop, not recursion: `((((...))))` is as deep as the uploader likes.
  while (value.type === 'parenthesized_expression') {
    const inner = value.namedChildren.filter((child) => child.type !== 'comment');
    if (inner.length !== 1) return false;
    value = inner[0];
  }
  if (value.type === 'concatenated_string') {
    return value.namedChildren.every((part) => part.type === 'comment' || isStrLiteral(source, part));
  }
  return isStrLiteral(source, value);
}

/** A synchronous `def run(x)` or `def run(x: PluginInfo)`, decorated or not. */
function isRunDefinition(source: string, statement: Node): boolean {
  const definition =
    statement.type === 'decorated_definition' ? statement.childForFieldName('definition') : statement;
  if (definition?.type !== 'function_definition') return false;
  const name = definition.childForFieldName('name');
  if (!name || identifierName(source, name) !== 'run') return false;
  if (definition.firstChild?.type === 'async') return false;
  const parameters = definition.childForFieldName('parameters');
  const declared = parameters?.namedChildren.filter((child) => child.type !== 'comment') ?? [];
  if (declared.length !== 1) return false;
  const [parameter] = declared;
  if (parameter.type === 'identifier') return true;
  return parameter.type === 'typed_parameter' && parameter.firstNamedChild?.type === 'identifier';
}
