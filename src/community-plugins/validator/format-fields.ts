import type { Node } from 'web-tree-sitter';

/**
 * The text a str.format template literal holds: its string parts, adjacent literals joined
 * (`"{0.gi_" "frame}"` is one field), or null when the node is not a plain literal (an
 * f-string's interpolations are code, checked as code, and no template).
 */
export function templateText(source: string, node: Node): string | null {
  while (node.type === 'parenthesized_expression' && node.namedChildCount === 1) node = node.firstNamedChild!;
  const parts = node.type === 'concatenated_string' ? node.namedChildren : [node];
  let text = '';
  for (const part of parts) {
    if (!part || part.type !== 'string') return null;
    for (const child of part.namedChildren) {
      if (!child) continue;
      if (child.type === 'interpolation') return null;
      if (child.type === 'string_content') text += source.slice(child.startIndex, child.endIndex);
    }
  }
  return text;
}

/**
 * The attribute names each replacement field of a template reads: `{0.gi_frame.f_globals}`
 * reads gi_frame, then f_globals. Fields nested in a format spec (`{0:{1.x}}`) are read too;
 * `{{` and `}}` are literal braces.
 */
export function fieldAttributeChains(template: string): string[][] {
  const chains: string[][] = [];
  let index = 0;
  while (index < template.length) {
    if (template[index] !== '{') {
      index++;
      continue;
    }
    if (template[index + 1] === '{') {
      index += 2;
      continue;
    }
    let depth = 1;
    let end = index + 1;
    while (end < template.length && depth > 0) {
      if (template[end] === '{') depth++;
      else if (template[end] === '}') depth--;
      end++;
    }
    const field = template.slice(index + 1, depth === 0 ? end - 1 : end);
    const nameEnd = field.search(/[!:]/);
    const name = nameEnd < 0 ? field : field.slice(0, nameEnd);
    const attributes = [...name.matchAll(/\.([^.[]*)/g)].map((match) => match[1]);
    if (attributes.length > 0) chains.push(attributes);
    const specStart = field.indexOf(':', Math.max(0, nameEnd));
    if (specStart >= 0) chains.push(...fieldAttributeChains(field.slice(specStart + 1)));
    index = end;
  }
  return chains;
}
