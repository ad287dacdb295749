// Jest's global setup: the build is current (built-workers.js), and this run gets one
// temporary directory of its own. TMPDIR points there, so every mkdtemp of the tests (Jest's
// workers start after this and inherit it) and of the processes they start lands in it, and
// the teardown removes it whole: nothing this run made stays in /tmp, and nothing another
// run made is touched.
const { mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const builtWorkers = require('./built-workers');

module.exports = function globalSetup() {
  builtWorkers();
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-run-'));
  process.env.SVC_TEST_RUN_DIR = dir;
  process.env.TMPDIR = dir;
};
