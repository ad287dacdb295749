// Preloaded into a svc-admin process (node --require) by the backup tests: at the step that
// SVC_TEST_STOP_AT names, the process says so on stderr and stops itself (SIGSTOP), so the test's
// kill -9 lands exactly there. Steps: `plugins` (the first plugin file written into the backup),
// `manifest`, `rename` (the directory moved into place), `marker` (the completion marker).
const { writeSync } = require('node:fs');
const promises = require('node:fs/promises');

const step = process.env.SVC_TEST_STOP_AT;
const stop = () => {
  writeSync(2, `stopped at ${step}\n`);
  process.kill(process.pid, 'SIGSTOP');
};
const matches = {
  plugins: (path, flags) =>
    flags === 'wx' && /[\\/]plugins[\\/][^\\/]+$/.test(path) && /\.incomplete-/.test(path),
  manifest: (path, flags) => flags === 'wx' && path.endsWith('manifest.json'),
  marker: (path, flags) => flags === 'wx' && path.endsWith('BACKUP-COMPLETE'),
};
if (step === 'rename') {
  const rename = promises.rename;
  promises.rename = (...args) => (stop(), rename(...args));
} else if (matches[step]) {
  const open = promises.open;
  promises.open = (path, flags, ...rest) => {
    if (matches[step](String(path), flags)) stop();
    return open(path, flags, ...rest);
  };
}
