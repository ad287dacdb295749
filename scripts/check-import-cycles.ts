/**
 * Fails when a TypeScript file of src/, scripts/, migrations/ or bench/ reaches itself again
 * through its relative imports (type-only ones too: a circle of types still ties two files to
 * each other). Run by `npm run lint`; madge is not a dependency, and the compiler's own parser
 * reads every import form the build does.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(__dirname, '..');
const FOLDERS = ['src', 'scripts', 'migrations', 'bench', 'test'];

function tsFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : tsFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The file a relative specifier names (`./a`, `./a.js`, `./dir` with an index), or none. */
function resolveImport(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier).replace(/\.js$/, '');
  return [`${base}.ts`, join(base, 'index.ts')].find((candidate) => existsSync(candidate));
}

function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      const target = resolveImport(file, node.moduleSpecifier.text);
      if (target) found.push(target);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const graph = new Map<string, string[]>();
for (const folder of FOLDERS)
  for (const file of tsFiles(join(ROOT, folder))) graph.set(file, importsOf(file));

// Depth-first search; a back edge to a file on the current path closes a circle.
const state = new Map<string, 'open' | 'done'>();
const path: string[] = [];
const circles: string[][] = [];
const walk = (file: string): void => {
  state.set(file, 'open');
  path.push(file);
  for (const next of graph.get(file) ?? []) {
    if (state.get(next) === 'open') circles.push([...path.slice(path.indexOf(next)), next]);
    else if (!state.has(next)) walk(next);
  }
  path.pop();
  state.set(file, 'done');
};
for (const file of graph.keys()) if (!state.has(file)) walk(file);

if (circles.length > 0) {
  for (const circle of circles)
    console.error(`import circle: ${circle.map((file) => relative(ROOT, file)).join(' -> ')}`);
  process.exit(1);
}
console.log(`no import circles among ${graph.size} files`);
