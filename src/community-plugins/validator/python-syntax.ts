import type { Node } from 'web-tree-sitter';

/**
 * Import bindings: local name -> every qualified name an import anywhere binds it to
 * (`import yaml as y` gives y -> [yaml]). Python scopes are not modelled, so a name may have
 * several, and the name may still mean the builtin or module of that name in another scope.
 */
export type ImportBindings = ReadonlyMap<string, readonly string[]>;

/** The rules' qualified names have at most four parts (`yaml.loader.SafeLoader`, ...). */
const MAX_QUALIFIED_NAME_SEGMENTS = 4;

/** Python compares identifiers after NFKC normalisation: `ｅｖａｌ` is `eval`. */
export function normalizeIdentifier(text: string): string {
  return isAscii(text) ? text : text.normalize('NFKC');
}

function isAscii(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    if (text.charCodeAt(index) > 0x7f) return false;
  }
  return true;
}

/** The text of a node, sliced from the source we parsed (indices are UTF-16 code units). */
export function nodeText(source: string, node: Node): string {
  return source.slice(node.startIndex, node.endIndex);
}

export function identifierName(source: string, node: Node): string {
  return normalizeIdentifier(nodeText(source, node));
}

/** `a.b.c` from a dotted_name node, each segment normalised (`import os . path` is legal). */
export function dottedName(source: string, node: Node): string {
  if (node.type === 'identifier') return identifierName(source, node);
  return node.namedChildren
    .filter((child) => child.type === 'identifier')
    .map((child) => identifierName(source, child))
    .join('.');
}

/**
 * Every qualified name an expression may refer to (`y.load` -> `y.load` and `yaml.load` after
 * `import yaml as y`), or an empty list if it is not a plain name or attribute chain.
 */
export function resolveQualifiedNames(source: string, node: Node, bindings: ImportBindings): string[] {
  const segments: string[] = [];
  let current: Node | null = node;
  while (current?.type === 'attribute') {
    if (segments.length >= MAX_QUALIFIED_NAME_SEGMENTS) return [];
    const attribute = current.childForFieldName('attribute');
    if (!attribute) return [];
    segments.unshift(identifierName(source, attribute));
    current = current.childForFieldName('object');
  }
  if (current?.type !== 'identifier') return [];
  const suffix = segments.map((segment) => `.${segment}`).join('');
  return nameCandidates(identifierName(source, current), bindings).map((base) => base + suffix);
}

/** What a plain name may mean: itself (a builtin, or a module in another scope) or any binding. */
export function nameCandidates(name: string, bindings: ImportBindings): string[] {
  const bound = bindings.get(name) ?? [];
  return bound.includes(name) ? [...bound] : [name, ...bound];
}

/** A str literal without interpolation: `'r'`, `u"x"`, `r'x'` but not `b'x'` or `f'{x}'`. */
export function isStrLiteral(source: string, node: Node): boolean {
  if (node.type !== 'string') return false;
  const start = node.firstChild;
  if (start?.type !== 'string_start' || /[bBfFtT]/.test(nodeText(source, start))) return false;
  return !node.namedChildren.some((child) => child.type === 'interpolation');
}

/** The value of a str literal whose content has no escapes, else null. */
export function simpleStrLiteralValue(source: string, node: Node): string | null {
  if (!isStrLiteral(source, node)) return null;
  const content = node.namedChildren.filter((child) => child.type === 'string_content');
  if (content.length === 0) return '';
  const [only] = content;
  if (content.length > 1 || only.childCount > 0) return null;
  return nodeText(source, only);
}

export type CallArgument =
  | { kind: 'absent' }
  | { kind: 'found'; node: Node }
  /** `*args`, `**kwargs` or an unusual argument shape: the value cannot be known statically. */
  | { kind: 'unknown' };

/** Finds the argument bound to a parameter given its 0-based position and keyword name. */
export function findCallArgument(
  source: string,
  call: Node,
  position: number,
  keyword: string,
): CallArgument {
  const argumentList = call.childForFieldName('arguments');
  if (argumentList?.type !== 'argument_list') return { kind: 'unknown' };
  const positional: Node[] = [];
  let hasUnpacking = false;
  for (const argument of argumentList.namedChildren) {
    if (argument.type === 'comment') continue;
    if (argument.type === 'keyword_argument') {
      const name = argument.childForFieldName('name');
      const value = argument.childForFieldName('value');
      if (name && value && identifierName(source, name) === keyword) {
        return { kind: 'found', node: value };
      }
    } else if (
      argument.type === 'list_splat' ||
      argument.type === 'dictionary_splat' ||
      argument.type === 'parenthesized_list_splat'
    ) {
      hasUnpacking = true;
    } else {
      positional.push(argument);
    }
  }
  if (hasUnpacking) return { kind: 'unknown' };
  return position < positional.length ? { kind: 'found', node: positional[position] } : { kind: 'absent' };
}
