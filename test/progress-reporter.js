// A jest reporter for CI's logs: a line when a spec file starts and when it ends, so a run that
// hangs shows which files were still running. If the process is still alive some seconds after
// the run completed (something a test opened keeps it running: a run in band would wait for it
// forever, where workers are killed), it says what is still open and ends the process with the
// run's outcome, as `--forceExit` would but saying why.
const { appendFileSync } = require('node:fs');
const { relative } = require('node:path');

// After the run come the global teardown and the JSON report: well under this.
const LINGER_MS = 30_000;

class ProgressReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    this.file = process.env.SVC_TEST_PROGRESS_FILE;
    // Watch mode stays alive on purpose.
    this.watching = Boolean(globalConfig.watch || globalConfig.watchAll);
  }

  /** To SVC_TEST_PROGRESS_FILE (CI's), or only what must be said (`always`) to the terminal. */
  write(line, always = false) {
    const stamped = `${new Date().toISOString()} ${line}\n`;
    if (this.file) appendFileSync(this.file, stamped);
    if (always) process.stderr.write(stamped);
  }

  onTestFileStart(test) {
    this.write(`start ${relative(this.rootDir, test.path)}`);
  }

  onTestFileResult(test, result) {
    const seconds = ((result.perfStats.end - result.perfStats.start) / 1000).toFixed(1);
    this.write(
      `end ${relative(this.rootDir, test.path)} ${seconds}s ` +
        `${result.numPassingTests} passed, ${result.numFailingTests} failed`,
    );
  }

  onRunComplete(_contexts, results) {
    this.write(`complete ${results.numPassedTests} passed, ${results.numFailedTests} failed`);
    if (this.watching) return;
    // unref'd: this timer itself never keeps the process alive.
    setTimeout(() => {
      this.write(`still running ${LINGER_MS / 1000}s after the run, ended: ${openHandles()}`, true);
      // Jest sets results.success only after its reporters are done: its own test of failure.
      const failed =
        results.numFailedTests > 0 ||
        results.numRuntimeErrorTestSuites > 0 ||
        results.runExecError !== undefined ||
        results.snapshot.failure;
      process.exit(failed ? 1 : 0);
    }, LINGER_MS).unref();
  }
}

/** What keeps the event loop alive, by kind, with a socket's peer where it has one. */
function openHandles() {
  const standard = [process.stdin, process.stdout, process.stderr];
  const described = process
    ._getActiveHandles()
    .filter((handle) => !standard.includes(handle))
    .map((handle) => {
      const kind = handle?.constructor?.name ?? typeof handle;
      if (kind === 'Socket' && handle.remotePort)
        return `Socket to ${handle.remoteAddress}:${handle.remotePort}`;
      if (kind === 'Server' && typeof handle.address === 'function') {
        const address = handle.address();
        return `Server on ${address && typeof address === 'object' ? address.port : address}`;
      }
      if (kind === 'ChildProcess') return `ChildProcess ${handle.pid} ${handle.spawnfile}`;
      return kind;
    });
  return described.length ? described.join('; ') : 'no handles (requests only)';
}

module.exports = ProgressReporter;
