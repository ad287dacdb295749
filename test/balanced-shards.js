const Sequencer = require('@jest/test-sequencer').default;
const path = require('node:path');
const durations = require('./e2e-durations.json');

const seconds = Object.values(durations.seconds).sort((a, b) => a - b);
/** What a file the table does not name yet counts as. */
const MEDIAN = seconds[Math.floor(seconds.length / 2)] ?? 1;

/**
 * CI runs the MariaDB e2e files one at a time, in two halves side by side (`jest --shard`).
 * Jest splits by a hash of each path, which left one half 110 s longer than the other; here
 * the files are dealt out longest first, each to the half with the least so far, by what each
 * took in one such run (test/e2e-durations.json, refreshed by
 * `node scripts/e2e-durations.js <jest --json outputs>`). Every half computes the same deal.
 */
class BalancedShards extends Sequencer {
  shard(tests, { shardIndex, shardCount }) {
    const weighed = tests
      .map((test) => {
        const file = path.posix.relative(test.context.config.rootDir, test.path);
        return { test, file, weight: durations.seconds[file] ?? MEDIAN };
      })
      .sort((a, b) => b.weight - a.weight || (a.file < b.file ? -1 : 1));
    const loads = new Array(shardCount).fill(0);
    const mine = [];
    for (const { test, weight } of weighed) {
      const lightest = loads.indexOf(Math.min(...loads));
      loads[lightest] += weight;
      if (lightest === shardIndex - 1) mine.push(test);
    }
    return mine;
  }
}

module.exports = BalancedShards;
