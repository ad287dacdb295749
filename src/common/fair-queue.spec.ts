import { FairQueue, QueueRefusedError, type FairQueueOptions } from './fair-queue';

/** A job that runs until the test ends it, recording when it started. */
class Job {
  private finish!: (value: string) => void;
  private fail!: (error: Error) => void;
  started = false;
  readonly promise: Promise<string>;

  constructor(readonly name: string) {
    this.promise = new Promise<string>((resolve, reject) => {
      this.finish = resolve;
      this.fail = reject;
    });
  }

  run = (): Promise<string> => {
    this.started = true;
    return this.promise;
  };

  end(): Promise<void> {
    this.finish(this.name);
    return flush();
  }

  crash(): Promise<void> {
    this.fail(new Error(`${this.name} failed`));
    return flush();
  }
}

/** Lets every settled promise's handlers run. */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The rejection's reason and message, or the answer when there was none. */
async function outcome(promise: Promise<string>): Promise<string> {
  try {
    return await promise;
  } catch (error) {
    return error instanceof QueueRefusedError ? `${error.reason}: ${error.message}` : String(error);
  }
}

describe('FairQueue', () => {
  const newQueue = (options: Partial<FairQueueOptions> = {}) =>
    new FairQueue({ name: 'test', concurrency: 1, maxQueued: 8, maxQueuedPerOwner: 8, ...options });

  it('runs as many jobs at once as its concurrency, and the next when one settles, failed or not', async () => {
    const queue = newQueue({ concurrency: 2 });
    const jobs = ['a', 'b', 'c', 'd'].map((name) => new Job(name));
    const answers = jobs.map((job) => outcome(queue.run('', job.run)));
    await flush();
    expect(jobs.map((job) => job.started)).toEqual([true, true, false, false]);
    await jobs[0].crash();
    expect(jobs.map((job) => job.started)).toEqual([true, true, true, false]);
    await jobs[1].end();
    expect(jobs[3].started).toBe(true);
    await jobs[2].end();
    await jobs[3].end();
    expect(await Promise.all(answers)).toEqual(['Error: a failed', 'b', 'c', 'd']);
  });

  it('refuses a job at once when the queue is full, and runs the ones it took', async () => {
    const queue = newQueue({ maxQueued: 2 });
    const jobs = ['a', 'b', 'c', 'd'].map((name) => new Job(name));
    const answers = jobs.map((job) => outcome(queue.run(job.name, job.run)));
    expect(await answers[3]).toBe('full: test queue is full');
    for (const job of jobs.slice(0, 3)) await job.end();
    expect(await Promise.all(answers.slice(0, 3))).toEqual(['a', 'b', 'c']);
    expect(jobs[3].started).toBe(false);
  });

  it("serves owners in turn and bounds each owner's waiting jobs, so a flood does not crowd out another owner", async () => {
    const queue = newQueue({ maxQueuedPerOwner: 2 });
    const order: string[] = [];
    const track = (job: Job, owner: string) =>
      outcome(queue.run(owner, job.run)).then((answer) =>
        order.push(answer.startsWith('full') ? `${job.name}:full` : answer),
      );
    const flood = ['a1', 'a2', 'a3', 'a4', 'a5'].map((name) => new Job(name));
    const other = new Job('b1');
    const done = Promise.all([...flood.map((job) => track(job, 'a')), track(other, 'b')]);
    // a1 runs at once, a2 and a3 wait, a4 and a5 are refused; b1 is served before a3.
    for (const job of [flood[0], flood[1], other, flood[2]]) {
      await flush();
      expect(job.started).toBe(true);
      await job.end();
    }
    await done;
    expect(order.filter((entry) => entry.endsWith(':full')).sort()).toEqual(['a4:full', 'a5:full']);
    expect(order.filter((entry) => !entry.includes(':'))).toEqual(['a1', 'a2', 'b1', 'a3']);
  });

  it('refuses waiting and later jobs on close, and lets a running one finish', async () => {
    const queue = newQueue();
    const running = new Job('running');
    const waiting = new Job('waiting');
    const answers = [outcome(queue.run('', running.run)), outcome(queue.run('', waiting.run))];
    await flush();
    queue.close();
    expect(await answers[1]).toBe('closed: test queue closed');
    expect(await outcome(queue.run('', new Job('late').run))).toBe('closed: test queue closed');
    await running.end();
    expect(await answers[0]).toBe('running');
    expect(waiting.started).toBe(false);
  });
});
