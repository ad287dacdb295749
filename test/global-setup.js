// Jest's global setup: the build is current (built-workers.js), and this run gets one
// temporary directory of its own. TMPDIR points there, so every mkdtemp of the tests (Jest's
// workers start after this and inherit it) and of the processes they start lands in it, and
// the teardown removes it whole: nothing this run made stays in /tmp, and nothing another
// run made is touched. Without SVC_TEST_REDIS_URL, the run has a Redis of its own too
// (private-redis.js).
const { mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const builtWorkers = require('./built-workers');
const { startPrivateRedis } = require('./private-redis');

module.exports = async function globalSetup() {
  builtWorkers();
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-run-'));
  process.env.SVC_TEST_RUN_DIR = dir;
  process.env.TMPDIR = dir;
  if (!process.env.SVC_TEST_REDIS_URL) {
    const redis = await startPrivateRedis();
    if (redis !== null) {
      // For the teardown, which runs in this process.
      globalThis.svcTestRedis = redis.server;
      process.env.SVC_TEST_REDIS_URL = redis.url;
    }
  }
};
