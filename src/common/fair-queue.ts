import type { QueueLoad, WaitObserver } from '../metrics/metrics';

/** Why a job was not run: the queue was full, or it has been closed. */
export class QueueRefusedError extends Error {
  constructor(
    readonly reason: 'full' | 'closed',
    message: string,
  ) {
    super(message);
  }
}

export interface FairQueueOptions {
  /** Names the queue in its errors: `<name> queue is full`. */
  name: string;
  /** Jobs started and not yet settled, at most. */
  concurrency: number;
  /** Jobs that may wait for a slot; beyond that `run` rejects at once. */
  maxQueued: number;
  /** Jobs one owner may have waiting, so one owner's flood cannot fill the queue. */
  maxQueuedPerOwner: number;
  /** Told, as each job starts, how long it waited for its slot (the metrics' queue waits). */
  waited?: WaitObserver;
}

interface Waiting {
  start: () => void;
  refuse: (error: QueueRefusedError) => void;
}

/**
 * Admission in front of a worker pool: at most `concurrency` jobs at a time, the rest waiting
 * in bounded queues per owner, and owners served in turn (one job each), so one owner's flood
 * neither fills the queue nor delays another owner's job behind it. piscina's own queue is
 * first in, first out, and keeps no count of tasks that carry an AbortSignal (they wait in
 * its skip queue, outside `maxQueue`), so the order and the bounds are kept here, and a job
 * reaches piscina only when a thread is free for it: its AbortSignal then times the job alone.
 */
export class FairQueue {
  /** Waiting jobs by owner; the map's order is the turn order. */
  private readonly queues = new Map<string, Waiting[]>();
  private queued = 0;
  private running = 0;
  private closed = false;

  constructor(private readonly options: FairQueueOptions) {}

  /** Jobs waiting for a slot, and jobs started and not yet settled (the metrics read it). */
  get load(): QueueLoad {
    return { waiting: this.queued, running: this.running };
  }

  run<T>(owner: string, job: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(this.refusal('closed'));
    const waiting = this.queues.get(owner) ?? [];
    if (this.running < this.options.concurrency && this.queued === 0) {
      this.options.waited?.(0);
      return this.start(job);
    }
    if (this.queued >= this.options.maxQueued || waiting.length >= this.options.maxQueuedPerOwner) {
      return Promise.reject(this.refusal('full'));
    }
    const since = performance.now();
    return new Promise<T>((resolve, reject) => {
      waiting.push({
        start: () => {
          this.options.waited?.((performance.now() - since) / 1000);
          this.start(job).then(resolve, reject);
        },
        refuse: reject,
      });
      this.queues.set(owner, waiting);
      this.queued += 1;
    });
  }

  /** Refuses the waiting jobs and every later one; jobs already started run to their end. */
  close(): void {
    this.closed = true;
    const error = this.refusal('closed');
    for (const waiting of this.queues.values()) for (const job of waiting) job.refuse(error);
    this.queues.clear();
    this.queued = 0;
  }

  private start<T>(job: () => Promise<T>): Promise<T> {
    this.running += 1;
    const settled = () => {
      this.running -= 1;
      this.next();
    };
    // A job that throws before it returns its promise counts as settled, too.
    return Promise.resolve().then(job).finally(settled);
  }

  /** Starts the first job of the owner whose turn it is; that owner goes to the back. */
  private next(): void {
    for (const [owner, waiting] of this.queues) {
      if (this.running >= this.options.concurrency) return;
      const job = waiting.shift()!;
      this.queues.delete(owner);
      if (waiting.length > 0) this.queues.set(owner, waiting);
      this.queued -= 1;
      job.start();
      return;
    }
  }

  private refusal(reason: 'full' | 'closed'): QueueRefusedError {
    const { name } = this.options;
    return new QueueRefusedError(
      reason,
      reason === 'full' ? `${name} queue is full` : `${name} queue closed`,
    );
  }
}
