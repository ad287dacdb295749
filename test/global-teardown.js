// Stops the run's own Redis, if it started one, and removes the run's temporary directory
// (global-setup.js). A test that left a file system mounted in it (the storage-fault tests
// unmount theirs) keeps it, and this says where.
const { rmSync } = require('node:fs');
const { stopPrivateRedis } = require('./private-redis');

module.exports = async function globalTeardown() {
  if (globalThis.svcTestRedis) await stopPrivateRedis(globalThis.svcTestRedis);
  const dir = process.env.SVC_TEST_RUN_DIR;
  if (!dir) return;
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch (error) {
    process.stderr.write(`could not remove the tests' temporary directory ${dir}: ${error.message}\n`);
  }
};
