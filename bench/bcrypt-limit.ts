import { hashSync, verifySync } from '@node-rs/bcrypt';
import bcryptjs from 'bcryptjs';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

export interface BcryptLimit {
  /** What the app hashes with (src/account/bcrypt-worker.ts), and so what the limit is of. */
  implementation: string;
  cost: number;
  cores: number;
  /** Median of `runs` compares on one thread, milliseconds. */
  compareMs: number;
  runs: number;
  /** The aim's limit: cores / one compare's time, logins per second. */
  loginsPerSecond: number;
  /**
   * Compares per second with one thread per core hashing at once: what the cores really give
   * together (a shared cache and clock make each a little slower than one alone).
   */
  parallelPerSecond: number;
  /** The same compare with bcryptjs (pure JavaScript), which the app used before, for comparison. */
  bcryptjs: { compareMs: number; parallelPerSecond: number };
}

const PASSWORD = 'Bench!Passw0rd';

type Compare = 'native' | 'bcryptjs';

/** Each worker: one compare to warm up, then `rounds` timed ones; answers their total ms. */
const workerSource = (compare: Compare) => `
const { parentPort, workerData } = require('node:worker_threads');
const compare = ${
  compare === 'native'
    ? `require(${JSON.stringify(require.resolve('@node-rs/bcrypt'))}).verifySync`
    : `require(${JSON.stringify(require.resolve('bcryptjs'))}).compareSync`
};
compare(workerData.password, workerData.hash);
const start = performance.now();
for (let round = 0; round < workerData.rounds; round++) compare(workerData.password, workerData.hash);
parentPort.postMessage(performance.now() - start);
`;

function parallelCompares(compare: Compare, hash: string, threads: number, rounds: number): Promise<number> {
  return Promise.all(
    Array.from(
      { length: threads },
      () =>
        new Promise<number>((resolve, reject) => {
          const worker = new Worker(workerSource(compare), {
            eval: true,
            workerData: { password: PASSWORD, hash, rounds },
          });
          worker.once('message', (totalMs: number) => {
            resolve(totalMs);
            void worker.terminate();
          });
          worker.once('error', reject);
        }),
    ),
  ).then((totals) => (threads * rounds) / (Math.max(...totals) / 1000));
}

function medianMs(runs: number, compare: () => boolean): number {
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const start = performance.now();
    if (!compare()) throw new Error('bcrypt compare failed');
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(runs / 2)];
}

/**
 * One compare at the configured cost, timed on this thread before the servers start; the
 * limit is cores / one compare's time. Then the same with every core hashing at once. Both
 * with the native binding the app uses, and with bcryptjs for comparison (one hash serves
 * both: they read each other's hashes).
 */
export async function measureBcryptLimit(cost: number, runs = 7): Promise<BcryptLimit> {
  const hash = hashSync(PASSWORD, cost);
  const compareMs = medianMs(runs, () => verifySync(PASSWORD, hash));
  const cores = availableParallelism();
  return {
    implementation: '@node-rs/bcrypt',
    cost,
    cores,
    compareMs,
    runs,
    loginsPerSecond: cores / (compareMs / 1000),
    parallelPerSecond: await parallelCompares('native', hash, cores, 3),
    bcryptjs: {
      compareMs: medianMs(runs, () => bcryptjs.compareSync(PASSWORD, hash)),
      parallelPerSecond: await parallelCompares('bcryptjs', hash, cores, 3),
    },
  };
}
