import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Language, Parser, type Tree } from 'web-tree-sitter';
import { AnalysisTimeoutError, type Deadline } from './deadline';

let parserPromise: Promise<Parser> | undefined;

/**
 * The Python parser, created once per process: loading the wasm grammar takes tens of
 * milliseconds. A failed load is forgotten so the next call retries instead of failing forever.
 */
export function getPythonParser(): Promise<Parser> {
  parserPromise ??= createPythonParser().catch((error: unknown) => {
    parserPromise = undefined;
    throw error;
  });
  return parserPromise;
}

async function createPythonParser(): Promise<Parser> {
  await Parser.init();
  // Pass bytes, not a path: given a path, web-tree-sitter does a dynamic import('fs/promises'),
  // which Jest's CommonJS runtime refuses.
  const language = await Language.load(await readFile(pythonGrammarPath()));
  const parser = new Parser();
  parser.setLanguage(language);
  return parser;
}

/** tree-sitter-python has no `exports` map, but resolve via package.json to be safe if it gains one. */
function pythonGrammarPath(): string {
  const packageDir = path.dirname(require.resolve('tree-sitter-python/package.json'));
  return path.join(packageDir, 'tree-sitter-python.wasm');
}

/**
 * Parses and hands the tree to `use`, always freeing the tree's wasm memory afterwards.
 * Parsing is synchronous, so sharing one parser between concurrent validations is safe.
 */
export function withSyntaxTree<T>(
  parser: Parser,
  text: string,
  deadline: Deadline,
  use: (tree: Tree) => T,
): T {
  const tree = parser.parse(text, null, { progressCallback: () => deadline.hasPassed() });
  if (!tree) {
    // A cancelled parse would otherwise resume on the next call, with the next plugin's text.
    parser.reset();
    throw new AnalysisTimeoutError(deadline.budgetMs);
  }
  try {
    return use(tree);
  } finally {
    tree.delete();
  }
}
