import { WORKER_READY, WorkerPool, WorkerPoolError, type WorkerPoolOptions } from './worker-pool';

type Job =
  | { op: 'echo'; value: string }
  | { op: 'fail' | 'throw' | 'exit' | 'hang' }
  /** Waits until `count` jobs have arrived at `shared`: only jobs running side by side all meet. */
  | { op: 'meet'; shared: SharedArrayBuffer; count: number };

interface Answer {
  value?: string;
  met?: boolean;
  threadId: number;
}

interface Start {
  /** Whether it posts WORKER_READY once loaded, as workers of pools with startupTimeoutMs do. */
  announce: boolean;
  /** Time it takes to load; Infinity never loads. */
  loadMs?: number;
}

/** A worker for each way a job can end. */
function testWorker({ announce, loadMs = 0 }: Start): string {
  return `
const { parentPort, threadId } = require('node:worker_threads');
const answer = (result) => parentPort.postMessage({ ok: true, result: { ...result, threadId } });
parentPort.on('message', (job) => {
  if (job.op === 'echo') answer({ value: job.value });
  if (job.op === 'fail') parentPort.postMessage({ ok: false, message: 'job refused' });
  if (job.op === 'throw') throw new Error('worker blew up');
  if (job.op === 'exit') process.exit(3);
  if (job.op === 'hang') for (;;);
  if (job.op === 'meet') {
    const arrived = new Int32Array(job.shared);
    Atomics.add(arrived, 0, 1);
    Atomics.notify(arrived, 0);
    for (let seen; (seen = Atomics.load(arrived, 0)) < job.count; ) {
      if (Atomics.wait(arrived, 0, seen, 10000) === 'timed-out') break;
    }
    answer({ met: Atomics.load(arrived, 0) >= job.count });
  }
});
for (const until = Date.now() + ${loadMs === Infinity ? 'Infinity' : loadMs}; Date.now() < until; );
${announce ? `parentPort.postMessage(${JSON.stringify(WORKER_READY)});` : ''}
`;
}

describe('WorkerPool', () => {
  const pools: WorkerPool<Job, Answer>[] = [];
  afterAll(() => Promise.all(pools.map((pool) => pool.close())));

  function newPool(
    options: Partial<WorkerPoolOptions> = {},
    start: Start = { announce: options.startupTimeoutMs !== undefined },
  ): WorkerPool<Job, Answer> {
    const pool = new WorkerPool<Job, Answer>({
      name: 'test',
      source: testWorker(start),
      size: 1,
      ...options,
    });
    pools.push(pool);
    return pool;
  }

  const echo = (value: string): Job => ({ op: 'echo', value });

  /** The rejection's reason and message, or the answer when there was none. */
  async function failure(promise: Promise<unknown>): Promise<unknown> {
    try {
      return await promise;
    } catch (error) {
      return error instanceof WorkerPoolError ? [error.reason, error.message] : String(error);
    }
  }

  it('answers each job, queued or not, and turns a job error into a rejection', async () => {
    const pool = newPool({ size: 2 });
    const answers = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((value) => pool.run(echo(value))));
    expect(answers.map((answer) => answer.value)).toEqual(['a', 'b', 'c', 'd', 'e']);
    await expect(pool.run({ op: 'fail' })).rejects.toThrow('job refused');
    expect((await pool.run(echo('f'))).value).toBe('f');
  });

  it('runs as many jobs side by side as it has workers, each on its own thread', async () => {
    const pool = newPool({ size: 2 });
    const shared = new SharedArrayBuffer(4);
    const answers = await Promise.all([1, 2].map(() => pool.run({ op: 'meet', shared, count: 2 })));
    expect(answers.map((answer) => answer.met)).toEqual([true, true]);
    expect(answers[0].threadId).not.toBe(answers[1].threadId);
  });

  it('refuses a job at once when the queue is full, and answers the ones it took', async () => {
    const pool = newPool({ size: 1, maxQueued: 2 });
    const results = await Promise.all(['a', 'b', 'c', 'd'].map((value) => failure(pool.run(echo(value)))));
    expect(results.slice(3)).toEqual([['busy', 'test pool queue is full']]);
    expect(results.slice(0, 3).map((answer) => (answer as Answer).value)).toEqual(['a', 'b', 'c']);
  });

  it("serves owners in turn and bounds each owner's waiting jobs, so a flood does not crowd out another owner", async () => {
    const pool = newPool({ size: 1, maxQueued: 8, maxQueuedPerOwner: 2 });
    const order: string[] = [];
    const track = (value: string, owner: string) =>
      failure(pool.run(echo(value), owner)).then((answer) => {
        order.push(Array.isArray(answer) ? `${value}:${answer[0]}` : value);
      });
    const flood = ['a1', 'a2', 'a3', 'a4', 'a5'].map((value) => track(value, 'a'));
    const other = track('b1', 'b');
    await Promise.all([...flood, other]);
    // a1 runs at once, a2 and a3 wait, a4 and a5 are refused; b1 is served before a3.
    expect(order.filter((entry) => entry.endsWith(':busy')).sort()).toEqual(['a4:busy', 'a5:busy']);
    expect(order.filter((entry) => !entry.includes(':'))).toEqual(['a1', 'a2', 'b1', 'a3']);
  });

  it('terminates a worker that overruns, fails only its job and replaces it', async () => {
    const pool = newPool({ size: 1, timeoutMs: 300, startupTimeoutMs: 10_000 });
    const before = await pool.run(echo('before'));
    const hung = failure(pool.run({ op: 'hang' }));
    const queued = pool.run(echo('queued'));
    expect(await hung).toEqual(['timeout', 'test job took longer than 300 ms']);
    const after = await queued;
    expect(after.value).toBe('queued');
    expect(after.threadId).not.toBe(before.threadId);
  });

  it('gives a loading worker its own time, apart from its first job', async () => {
    const pool = newPool({ timeoutMs: 300, startupTimeoutMs: 10_000 }, { announce: true, loadMs: 600 });
    expect((await pool.run(echo('a'))).value).toBe('a');
  });

  it('fails the job of a worker that never loads', async () => {
    const pool = newPool({ timeoutMs: 10_000, startupTimeoutMs: 300 }, { announce: true, loadMs: Infinity });
    expect(await failure(pool.run(echo('a')))).toEqual([
      'timeout',
      'test worker took longer than 300 ms to start',
    ]);
  });

  it('counts loading as job time without startupTimeoutMs', async () => {
    const pool = newPool({ timeoutMs: 300 }, { announce: false, loadMs: 600 });
    expect(await failure(pool.run(echo('a')))).toEqual(['timeout', 'test job took longer than 300 ms']);
  });

  it.each([
    ['throws', { op: 'throw' } as const, ['crashed', 'test worker failed: worker blew up']],
    ['exits', { op: 'exit' } as const, ['crashed', 'test worker exited with code 3']],
  ])('fails only the job of a worker that %s, and replaces the worker', async (_, job, expected) => {
    const pool = newPool({ size: 1 });
    const before = await pool.run(echo('before'));
    const crashed = failure(pool.run(job));
    const queued = pool.run(echo('queued'));
    expect(await crashed).toEqual(expected);
    const after = await queued;
    expect(after.value).toBe('queued');
    expect(after.threadId).not.toBe(before.threadId);
  });

  it('fails running and queued jobs on close, and refuses new ones', async () => {
    const pool = newPool({ size: 1 });
    const running = failure(pool.run({ op: 'hang' }));
    const queued = failure(pool.run(echo('queued')));
    await pool.close();
    const closed = ['closed', 'test pool closed'];
    expect(await running).toEqual(closed);
    expect(await queued).toEqual(closed);
    expect(await failure(pool.run(echo('late')))).toEqual(closed);
  });
});
