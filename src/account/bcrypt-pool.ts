import { availableParallelism } from 'node:os';
import { WorkerPool } from '../common/worker-pool';

type Job = { op: 'hash'; password: string; cost: number } | { op: 'compare'; password: string; hash: string };

/**
 * Linux keeps a nice value per thread: a hashing thread at nice 10 gives the CPU up to the
 * event loop (and the database) whenever they want it, and still gets every cycle they
 * leave. With as many workers as cores, a burst of logins would otherwise take the cores from
 * the requests around it (`npm run bench`, 2 cores: GET p99 2.2-2.5x its idle value with
 * 20 logins/s beside it; 1.2x with this). Elsewhere the call would renice the whole
 * process, so it is made on Linux only.
 */
const LOWER_PRIORITY =
  process.platform === 'linux' ? "try { require('node:os').setPriority(10); } catch {}" : '';

/**
 * bcrypt is pure CPU for tens to hundreds of milliseconds; run on the event loop it would
 * stall every other request during a burst of logins. Each worker runs one computation at a
 * time, synchronously, so a login costs one bcrypt computation and nothing more.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const bcrypt = require(${JSON.stringify(require.resolve('bcryptjs'))});
${LOWER_PRIORITY}
parentPort.on('message', (job) => {
  try {
    const result = job.op === 'hash' ? bcrypt.hashSync(job.password, job.cost) : bcrypt.compareSync(job.password, job.hash);
    parentPort.postMessage({ ok: true, result });
  } catch (error) {
    parentPort.postMessage({ ok: false, message: String(error && error.message) });
  }
});
`;

export class BcryptPool {
  private readonly pool: WorkerPool<Job, string | boolean>;

  constructor(size = Math.max(1, Math.min(4, availableParallelism()))) {
    this.pool = new WorkerPool({ name: 'bcrypt', source: WORKER_SOURCE, size });
  }

  hash(password: string, cost: number): Promise<string> {
    return this.pool.run({ op: 'hash', password, cost }) as Promise<string>;
  }

  compare(password: string, hash: string): Promise<boolean> {
    return this.pool.run({ op: 'compare', password, hash }) as Promise<boolean>;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
