// tsc emits JavaScript (and the JSON it imports), not Python: copy the validator's analyser (with
// its package of modules) and the test-run's runner beside their compiled modules, where they are
// started from (dist/ is then self-contained).
const { cpSync, existsSync, mkdirSync, readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');

function copyPython(from, to) {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) {
      // A package of modules (python/analysis/); never the interpreter's own cache.
      if (entry.name !== '__pycache__') copyPython(source, target);
      continue;
    }
    if (!entry.name.endsWith('.py') && !entry.name.endsWith('.json')) continue;
    // Only what changed: a build beside a running suite must not rewrite the file a worker reads.
    if (existsSync(target) && readFileSync(target).equals(readFileSync(source))) continue;
    cpSync(source, target);
  }
}

for (const feature of ['plugin-validator', 'plugin-jail']) {
  copyPython(join(ROOT, 'src', feature, 'python'), join(ROOT, 'dist', 'src', feature, 'python'));
}
