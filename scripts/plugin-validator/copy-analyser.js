// tsc emits JavaScript (and the JSON it imports), not the analyser's Python: copy it beside the
// compiled validator, where python-worker.ts starts it from (dist/ is then self-contained).
const { cpSync, existsSync, mkdirSync, readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..', '..');
const from = join(ROOT, 'src', 'plugin-validator', 'python');
const to = join(ROOT, 'dist', 'src', 'plugin-validator', 'python');
mkdirSync(to, { recursive: true });
for (const name of readdirSync(from)) {
  if (!name.endsWith('.py') && !name.endsWith('.json')) continue;
  // Only what changed: a build beside a running suite must not rewrite the file a worker reads.
  const target = join(to, name);
  if (existsSync(target) && readFileSync(target).equals(readFileSync(join(from, name)))) continue;
  cpSync(join(from, name), target);
}
