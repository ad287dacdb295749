import bcrypt from 'bcryptjs';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

export interface BcryptLimit {
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
}

const PASSWORD = 'Bench!Passw0rd';

/** Each worker: one compare to warm up, then `rounds` timed ones; answers their total ms. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const bcrypt = require(${JSON.stringify(require.resolve('bcryptjs'))});
bcrypt.compareSync(workerData.password, workerData.hash);
const start = performance.now();
for (let round = 0; round < workerData.rounds; round++) bcrypt.compareSync(workerData.password, workerData.hash);
parentPort.postMessage(performance.now() - start);
`;

function parallelCompares(hash: string, threads: number, rounds: number): Promise<number> {
  return Promise.all(
    Array.from(
      { length: threads },
      () =>
        new Promise<number>((resolve, reject) => {
          const worker = new Worker(WORKER_SOURCE, {
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

/**
 * One compare at the configured cost, timed on this thread before the servers start; the
 * limit is cores / one compare's time. Then the same with every core hashing at once.
 */
export async function measureBcryptLimit(cost: number, runs = 7): Promise<BcryptLimit> {
  const hash = bcrypt.hashSync(PASSWORD, cost);
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const start = performance.now();
    if (!bcrypt.compareSync(PASSWORD, hash)) throw new Error('bcrypt compare failed');
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const compareMs = times[Math.floor(runs / 2)];
  const cores = availableParallelism();
  return {
    cost,
    cores,
    compareMs,
    runs,
    loginsPerSecond: cores / (compareMs / 1000),
    parallelPerSecond: await parallelCompares(hash, cores, 3),
  };
}
