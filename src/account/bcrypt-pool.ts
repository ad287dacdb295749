import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

type Job = { op: 'hash'; password: string; cost: number } | { op: 'compare'; password: string; hash: string };

interface Pending {
  job: Job;
  resolve: (value: string | boolean) => void;
  reject: (error: Error) => void;
}

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
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Pending>();
  private readonly queue: Pending[] = [];
  private closed = false;

  constructor(private readonly size = Math.max(1, Math.min(4, availableParallelism()))) {}

  hash(password: string, cost: number): Promise<string> {
    return this.run({ op: 'hash', password, cost }) as Promise<string>;
  }

  compare(password: string, hash: string): Promise<boolean> {
    return this.run({ op: 'compare', password, hash }) as Promise<boolean>;
  }

  async close(): Promise<void> {
    this.closed = true;
    const workers = [...this.idle, ...this.busy.keys()];
    this.idle.length = 0;
    for (const pending of [...this.queue, ...this.busy.values()])
      pending.reject(new Error('bcrypt pool closed'));
    this.queue.length = 0;
    this.busy.clear();
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private run(job: Job): Promise<string | boolean> {
    if (this.closed) return Promise.reject(new Error('bcrypt pool closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ job, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const worker = this.idle.pop() ?? (this.workerCount() < this.size ? this.spawn() : undefined);
      if (!worker) return;
      const pending = this.queue.shift()!;
      this.busy.set(worker, pending);
      worker.postMessage(pending.job);
    }
  }

  private workerCount(): number {
    return this.idle.length + this.busy.size;
  }

  private spawn(): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    worker.on('message', (message: { ok: boolean; result?: string | boolean; message?: string }) => {
      const pending = this.busy.get(worker);
      this.busy.delete(worker);
      if (!this.closed) this.idle.push(worker);
      if (pending) {
        if (message.ok) pending.resolve(message.result!);
        else pending.reject(new Error(message.message));
      }
      this.dispatch();
    });
    // A worker that dies takes only its own job with it; the pool makes a new one on demand.
    worker.on('error', (error) => {
      const pending = this.busy.get(worker);
      this.busy.delete(worker);
      const index = this.idle.indexOf(worker);
      if (index >= 0) this.idle.splice(index, 1);
      pending?.reject(error);
      this.dispatch();
    });
    return worker;
  }
}
