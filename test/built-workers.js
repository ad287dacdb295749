// Worker threads do not load modules through Jest, so they cannot run the TypeScript sources
// that ts-jest compiles for the tests. The pools name their worker files with
// `require.resolve('./<worker>')`; under Jest that name is mapped to the compiled file in
// dist/ (jest.config.js), and this global setup makes sure dist/ is there and not older than
// the sources, so the threads never run stale code. The e2e tests also run the built svc-admin
// (bin/svc-admin.js), which loads the migrations too. `npm test` builds first.
const { readdirSync, statSync } = require('node:fs');
const { join, relative } = require('node:path');

const ROOT = join(__dirname, '..');
const WORKERS = {
  'bcrypt-worker': 'src/account/bcrypt-worker',
  'mail-thread': 'src/mail/mail-thread',
  'diff-worker': 'src/community-plugins/review/diff-worker',
};

const moduleNameMapper = Object.fromEntries(
  Object.entries(WORKERS).map(([name, source]) => [`^\\./${name}$`, join(ROOT, 'dist', `${source}.js`)]),
);

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (/\.(ts|json|py)$/.test(entry.name) && !entry.name.endsWith('.spec.ts')) {
      // .py too: the build copies the analyser's package and the runner (scripts/copy-python.js).
      newest = Math.max(newest, statSync(path).mtimeMs);
    }
  }
  return newest;
}

const STAMP = join(ROOT, 'dist', 'build-stamp');

function globalSetup() {
  const sources = Math.max(newestSource(join(ROOT, 'src')), newestSource(join(ROOT, 'migrations')));
  for (const built of [...Object.values(moduleNameMapper), join(ROOT, 'dist/src/cli.js'), STAMP]) {
    try {
      statSync(built);
    } catch {
      throw new Error(`${relative(ROOT, built)} is missing: run \`npm run build\` before jest`);
    }
  }
  // The build is incremental: it leaves unchanged outputs as they are and stamps its end.
  if (statSync(STAMP).mtimeMs < sources) {
    throw new Error('dist/ is older than src/: run `npm run build` before jest');
  }
}

module.exports = globalSetup;
module.exports.moduleNameMapper = moduleNameMapper;
