// Lets `node -r` run the TypeScript sources directly, so the CLI e2e test starts the real
// svc-admin process without a build. The project compiles per file (isolatedModules), so a
// per-file transpile gives the same JavaScript that tsc emits.
const { readFileSync } = require('node:fs');
const ts = require('typescript');

const compilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2023,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  esModuleInterop: true,
  sourceMap: false,
  inlineSourceMap: true,
};

require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(readFileSync(filename, 'utf8'), {
    compilerOptions,
    fileName: filename,
  });
  module._compile(outputText, filename);
};
