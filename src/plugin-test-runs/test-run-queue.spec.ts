import { TestRunQueue } from './test-run-queue';

const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
};

describe('TestRunQueue', () => {
  it('admits one run per core and the waiting ones, and refuses the next until one ends', async () => {
    const queue = new TestRunQueue(2, 1);
    expect([queue.admit(), queue.admit(), queue.admit(), queue.admit()]).toEqual([true, true, true, false]);
    const gates = [gate(), gate(), gate()];
    const started: number[] = [];
    const runs = gates.map((g, index) =>
      queue.run(async () => {
        started.push(index);
        await g.opened;
      }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1]);
    gates[0].open();
    await runs[0];
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1, 2]);
    expect(queue.admit()).toBe(true);
    gates[1].open();
    gates[2].open();
    await Promise.all(runs);
  });

  it('gives back the place of a run that will not run', () => {
    const queue = new TestRunQueue(1, 0);
    expect(queue.admit()).toBe(true);
    expect(queue.admit()).toBe(false);
    queue.release();
    expect(queue.admit()).toBe(true);
  });
});
