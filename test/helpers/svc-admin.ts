import { execFile } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * svc-admin as a real process: the package's own bin, on the build (jest's global setup
 * refuses a dist/ older than src/), in `cwd` (the checkout unless given), with no setting but
 * PATH and `env`.
 */
export function runSvcAdmin(args: string[], env: Record<string, string>, cwd = ROOT): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, 'bin/svc-admin.js'), ...args],
      {
        cwd,
        env: { PATH: process.env.PATH, ...env },
        timeout: 60_000,
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    );
  });
}
