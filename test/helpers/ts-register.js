// Lets `node -r` run the TypeScript sources directly (the CLI and process e2e tests, bench,
// scripts). The project compiles per file (isolatedModules), so a per-file transpile gives the
// same JavaScript that tsc emits. Output is cached by content in node_modules/.cache: loading
// the TypeScript compiler takes seconds on a busy machine, and every process and worker thread
// (the validator's and bcrypt's) would otherwise pay it again.
const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const compilerOptions = {
  target: 'ES2023',
  module: 'CommonJS',
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  esModuleInterop: true,
  sourceMap: false,
  inlineSourceMap: true,
};
const cacheDir = join(__dirname, '..', '..', 'node_modules', '.cache', 'ts-register');
// A new compiler or new options make new entries.
const optionsKey = JSON.stringify([require('typescript/package.json').version, compilerOptions]);
let ts;

function transpile(source, filename) {
  const key = createHash('sha256')
    .update(optionsKey)
    .update('\0')
    .update(filename)
    .update('\0')
    .update(source)
    .digest('hex');
  const cached = join(cacheDir, `${key}.js`);
  try {
    return readFileSync(cached, 'utf8');
  } catch {
    // Not cached yet.
  }
  ts ??= require('typescript');
  const options = ts.convertCompilerOptionsFromJson(compilerOptions, '').options;
  const { outputText } = ts.transpileModule(source, { compilerOptions: options, fileName: filename });
  // Written aside and renamed, so a concurrent reader never sees half a file.
  mkdirSync(cacheDir, { recursive: true });
  const partial = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  writeFileSync(partial, outputText);
  renameSync(partial, cached);
  return outputText;
}

require.extensions['.ts'] = (module, filename) => {
  module._compile(transpile(readFileSync(filename, 'utf8'), filename), filename);
};
