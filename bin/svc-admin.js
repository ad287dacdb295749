#!/usr/bin/env node
// The `svc-admin` command of package.json's bin: runs the built CLI from dist/.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const cli = join(__dirname, '..', 'dist', 'src', 'cli.js');
if (!existsSync(cli)) {
  process.stderr.write('svc-admin: dist/src/cli.js is missing; run `npm run build` first\n');
  process.exit(1);
}
require(cli);
