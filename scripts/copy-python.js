// tsc emits JavaScript (and the JSON it imports), not Python: copy the validator's analyser and
// the test-run's runner beside their compiled modules, where they are started from (dist/ is
// then self-contained).
const { cpSync, existsSync, mkdirSync, readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
for (const feature of ['plugin-validator', 'plugin-test-run']) {
  const from = join(ROOT, 'src', feature, 'python');
  const to = join(ROOT, 'dist', 'src', feature, 'python');
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from)) {
    if (!name.endsWith('.py') && !name.endsWith('.json')) continue;
    // Only what changed: a build beside a running suite must not rewrite the file a worker reads.
    const target = join(to, name);
    if (existsSync(target) && readFileSync(target).equals(readFileSync(join(from, name)))) continue;
    cpSync(join(from, name), target);
  }
}
