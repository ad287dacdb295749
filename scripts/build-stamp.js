// The build is incremental (tsconfig.build.json): a source saved again unchanged emits nothing,
// so the time of the last finished build is this stamp, which the tests' global setup compares
// with the sources (test/built-workers.js).
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

writeFileSync(join(__dirname, '..', 'dist', 'build-stamp'), `${new Date().toISOString()}\n`);
