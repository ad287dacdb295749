import type { Language, Node, Tree } from 'web-tree-sitter';
import type { Deadline } from './deadline';
import type { Findings } from './findings';
import { checkImports, IMPORT_NODE_TYPES } from './imports';
import { NameRules } from './name-rules';
import { normalizeIdentifier } from './python-syntax';
import { MAX_NESTING_DEPTH, Rule } from './rules';
import { type Ancestry, SyntaxContext } from './syntax-context';

/**
 * Nodes that open a nesting level in the source: indented blocks and bracketed constructs.
 * Operator chains (`a + b + c`) are deep in the tree but flat in the source, so they do not count.
 */
const NESTING_NODE_TYPES: readonly string[] = [
  'block',
  'argument_list',
  'parameters',
  'list',
  'tuple',
  'dictionary',
  'set',
  'parenthesized_expression',
  'parenthesized_list_splat',
  'subscript',
  'list_comprehension',
  'dictionary_comprehension',
  'set_comprehension',
  'generator_expression',
  'interpolation',
  'format_expression',
  'lambda',
  'list_pattern',
  'tuple_pattern',
  'dict_pattern',
  'class_pattern',
  'type_parameter',
];

/** Targets visited between two looks at the clock. */
const DEADLINE_CHECK_INTERVAL = 256;

type NodeKind = 'nesting' | 'identifier' | 'import' | 'exec-statement';

const NODE_KINDS: ReadonlyArray<[kind: NodeKind, types: readonly string[]]> = [
  ['nesting', NESTING_NODE_TYPES],
  ['identifier', ['identifier']],
  ['import', IMPORT_NODE_TYPES],
  ['exec-statement', ['exec_statement']],
];
const SCANNED_NODE_TYPES = NODE_KINDS.flatMap(([, types]) => types);

/** Kind by grammar type id; per Language object because ids are grammar-specific. */
const kindsByLanguage = new WeakMap<Language, ReadonlyMap<number, NodeKind>>();

interface WatchedIdentifier {
  node: Node;
  name: string;
}

/**
 * Checks the whole tree. One descendantsOfType call collects every node a rule looks at, in
 * document order (the traversal runs inside wasm, several times faster than stepping a cursor
 * from JavaScript). Only the few identifiers a rule cares about get their surroundings read,
 * by one cursor that only moves forward. Nothing recurses and nothing calls Node#parent
 * (O(depth x siblings) per call), so hostile deep or wide files still cost linear time.
 */
export function checkSyntaxTree(tree: Tree, source: string, findings: Findings, deadline: Deadline): void {
  const root = tree.rootNode;
  if (root.hasError) reportSyntaxErrors(tree, findings);

  const kinds = kindsFor(tree.language);
  const nesting: Node[] = [];
  const identifiers: Node[] = [];
  const imports: Node[] = [];
  for (const node of root.descendantsOfType([...SCANNED_NODE_TYPES])) {
    switch (kinds.get(node.typeId)) {
      case 'nesting':
        nesting.push(node);
        break;
      case 'identifier':
        identifiers.push(node);
        break;
      case 'import':
        imports.push(node);
        break;
      case 'exec-statement':
        findings.add(Rule.forbiddenName, "Use of forbidden name 'exec'", node.startPosition);
        break;
    }
  }

  const tooDeep = firstNodeNestedTooDeep(nesting);
  if (tooDeep) {
    // Stop: the file is rejected anyway, and deep structures are where hostile input lives.
    findings.add(
      Rule.tooDeep,
      `Nesting deeper than ${MAX_NESTING_DEPTH} levels is not allowed`,
      tooDeep.startPosition,
    );
    return;
  }

  const { bindings, importedNames } = checkImports(source, imports, findings);
  const nameRules = new NameRules(source, findings, bindings, root);
  for (const { qualifiedName, node } of importedNames) {
    nameRules.checkImportedName(qualifiedName, node);
  }
  deadline.throwIfPassed();
  const watched = watchedIdentifiers(identifiers, imports, source, nameRules);
  deadline.throwIfPassed();
  visitInDocumentOrder(tree, watched, deadline, (target, fieldName, ancestry) => {
    nameRules.checkIdentifier(new SyntaxContext(target.node, 'identifier', fieldName, ancestry), target.name);
  });
}

/** Identifiers some rule cares about, minus those inside imports (checkImports owns those). */
function watchedIdentifiers(
  identifiers: readonly Node[],
  imports: readonly Node[],
  source: string,
  nameRules: NameRules,
): WatchedIdentifier[] {
  const watched: WatchedIdentifier[] = [];
  let importIndex = 0;
  let importEnd = -1;
  for (const node of identifiers) {
    const start = node.startIndex;
    // Both lists are in document order and imports never nest, so one pointer suffices.
    while (importIndex < imports.length && imports[importIndex].startIndex <= start) {
      importEnd = imports[importIndex].endIndex;
      importIndex++;
    }
    if (start < importEnd) continue;
    const name = normalizeIdentifier(source.slice(start, node.endIndex));
    if (nameRules.isWatched(name)) watched.push({ node, name });
  }
  return watched;
}

/**
 * The first node more than MAX_NESTING_DEPTH nesting nodes deep. `nodes` are in document
 * order, so a stack of the end offsets of the open ones gives each node's depth.
 */
function firstNodeNestedTooDeep(nodes: readonly Node[]): Node | null {
  const openEnds: number[] = [];
  for (const node of nodes) {
    const start = node.startIndex;
    while (openEnds.length > 0 && openEnds[openEnds.length - 1] <= start) openEnds.pop();
    openEnds.push(node.endIndex);
    if (openEnds.length > MAX_NESTING_DEPTH) return node;
  }
  return null;
}

/**
 * Moves one cursor to each target in turn and hands over the target's field name and its
 * ancestry. Targets are in document order and the cursor only ever moves to a next sibling, a
 * first child or back up, so the whole visit enters each node at most once: linear even for
 * 100,000-deep chains or 100,000-wide tuples.
 */
function visitInDocumentOrder<T extends { node: Node }>(
  tree: Tree,
  targets: readonly T[],
  deadline: Deadline,
  visit: (target: T, fieldName: string | null, ancestry: Ancestry) => void,
): void {
  if (targets.length === 0) return;
  const cursor = tree.walk();
  const ancestry = { types: [] as string[], nodes: [] as Node[], fieldNames: [] as Array<string | null> };
  const contains = (start: number, end: number): boolean =>
    cursor.startIndex <= start && end <= cursor.endIndex;
  const lost = (): Error => new Error('syntax tree walk lost its target');
  try {
    for (const [index, target] of targets.entries()) {
      if (index % DEADLINE_CHECK_INTERVAL === 0) deadline.throwIfPassed();
      const start = target.node.startIndex;
      const end = target.node.endIndex;
      // Leave what lies before the target: on to the next sibling, or up when there is none.
      while (!contains(start, end)) {
        if (cursor.endIndex <= start && cursor.gotoNextSibling()) continue;
        if (!cursor.gotoParent()) throw lost();
        ancestry.types.pop();
        ancestry.nodes.pop();
        ancestry.fieldNames.pop();
      }
      // Then down, through the child that contains it, until we are on it.
      while (cursor.nodeId !== target.node.id) {
        ancestry.types.push(cursor.nodeType);
        ancestry.nodes.push(cursor.currentNode);
        ancestry.fieldNames.push(cursor.currentFieldName);
        if (!cursor.gotoFirstChild()) throw lost();
        while (!contains(start, end)) {
          if (!cursor.gotoNextSibling()) throw lost();
        }
      }
      visit(target, cursor.currentFieldName, ancestry);
    }
  } finally {
    cursor.delete();
  }
}

/** Only for trees tree-sitter flagged: finds every ERROR and MISSING node with a full walk. */
function reportSyntaxErrors(tree: Tree, findings: Findings): void {
  const cursor = tree.walk();
  try {
    for (;;) {
      if (cursor.nodeType === 'ERROR') {
        findings.add(Rule.syntaxError, 'Syntax error: invalid Python', cursor.startPosition);
      } else if (cursor.nodeIsMissing) {
        findings.add(Rule.syntaxError, `Syntax error: missing '${cursor.nodeType}'`, cursor.startPosition);
      }
      if (cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) return;
      }
    }
  } finally {
    cursor.delete();
  }
}

function kindsFor(language: Language): ReadonlyMap<number, NodeKind> {
  let kinds = kindsByLanguage.get(language);
  if (!kinds) {
    const byType = new Map<number, NodeKind>();
    language.types.forEach((type, typeId) => {
      const kind = NODE_KINDS.find(([, types]) => types.includes(type))?.[0];
      if (kind) byType.set(typeId, kind);
    });
    kinds = byType;
    kindsByLanguage.set(language, kinds);
  }
  return kinds;
}
