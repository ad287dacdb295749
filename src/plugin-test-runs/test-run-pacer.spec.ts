import type { PausableRun } from '../plugin-jail';
import { TestRunPacer } from './test-run-pacer';

/** A run that records whether it is paused now. */
const fakeRun = () => {
  const run = { paused: false, pause: () => (run.paused = true), resume: () => (run.paused = false) };
  return run as PausableRun & { paused: boolean };
};

describe('TestRunPacer', () => {
  it('pauses every run while the event loop is busy, and resumes them when it is quiet', () => {
    let busy = true;
    // A day-long sample period: only add and remove pace here.
    const pacer = new TestRunPacer(() => busy, 86_400_000);
    const [first, second] = [fakeRun(), fakeRun()];
    pacer.add(first);
    pacer.add(second);
    expect([first.paused, second.paused]).toEqual([true, true]);
    busy = false;
    pacer.remove(first);
    expect(second.paused).toBe(false);
    pacer.remove(second);
  });

  it('samples the event loop on its timer while a run runs, and stops with the last', async () => {
    let busy = false;
    let samples = 0;
    const pacer = new TestRunPacer(() => {
      samples += 1;
      return busy;
    }, 5);
    const run = fakeRun();
    pacer.add(run);
    busy = true;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(run.paused).toBe(true);
    busy = false;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(run.paused).toBe(false);
    pacer.remove(run);
    const taken = samples;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(samples).toBe(taken);
  });
});
