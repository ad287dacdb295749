import type { Node } from 'web-tree-sitter';

/** The chain from the root down to (excluding) the current node, root first. */
export interface Ancestry {
  types: readonly string[];
  nodes: readonly Node[];
  /** Field under which each ancestor hangs in its own parent (`function`, `object`, ...). */
  fieldNames: ReadonlyArray<string | null>;
}

/**
 * The surroundings of one node. Level 0 is the node itself, level 1 its parent, and so on.
 * Everything comes from the walk's ancestry stacks: Node#parent costs O(depth x siblings) per
 * call in tree-sitter, and a TreeCursor copy O(depth), either of which makes hostile files
 * quadratic.
 */
export class SyntaxContext {
  constructor(
    private readonly current: Node,
    private readonly currentType: string,
    private readonly currentFieldName: string | null,
    private readonly ancestry: Ancestry,
  ) {}

  /** Type of the node `level` steps up, or undefined above the root. */
  type(level: number): string | undefined {
    return level === 0 ? this.currentType : this.ancestry.types[this.ancestry.types.length - level];
  }

  /** Field name under which the node `level` steps up hangs in its parent. */
  fieldName(level: number): string | null {
    if (level === 0) return this.currentFieldName;
    return this.ancestry.fieldNames[this.ancestry.fieldNames.length - level] ?? null;
  }

  node(level: number): Node | null {
    return level === 0 ? this.current : (this.ancestry.nodes[this.ancestry.nodes.length - level] ?? null);
  }

  /**
   * Level of the `call` that calls the expression at `level`, or -1 if it is not called.
   * Parentheses are looked through: `(open)(path, 'w')` calls open.
   */
  callLevelOf(level: number): number {
    let calleeLevel = level;
    while (this.type(calleeLevel + 1) === 'parenthesized_expression') calleeLevel++;
    const isCallee = this.type(calleeLevel + 1) === 'call' && this.fieldName(calleeLevel) === 'function';
    return isCallee ? calleeLevel + 1 : -1;
  }
}
