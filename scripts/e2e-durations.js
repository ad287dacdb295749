// Writes test/e2e-durations.json from the `jest --json` outputs of a MariaDB e2e run (both
// halves): each e2e file's seconds, which test/balanced-shards.js deals the halves by.
// Usage: node scripts/e2e-durations.js <mariadb-1.json> <mariadb-2.json>
const { readFileSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const seconds = {};
for (const file of process.argv.slice(2)) {
  for (const result of JSON.parse(readFileSync(file, 'utf8')).testResults) {
    const relative = path.relative(root, result.name).split(path.sep).join('/');
    seconds[relative] = Math.round((result.endTime - result.startTime) / 100) / 10;
  }
}
if (Object.keys(seconds).length === 0) throw new Error('no test results in the given files');
const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => (a < b ? -1 : 1)));
const table = { measured: 'MariaDB, one file at a time, two halves side by side (.ci/run)', seconds: sorted };
writeFileSync(path.join(root, 'test', 'e2e-durations.json'), JSON.stringify(table, null, 2) + '\n');
console.log(`test/e2e-durations.json: ${Object.keys(sorted).length} files`);
