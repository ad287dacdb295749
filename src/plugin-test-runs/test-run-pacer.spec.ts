import type { PausableRun } from '../plugin-jail';
import { TestRunPacer } from './test-run-pacer';

/** A run that records whether it is paused now. */
const fakeRun = () => {
  const run = { paused: false, pause: () => (run.paused = true), resume: () => (run.paused = false) };
  return run as PausableRun & { paused: boolean };
};

describe('TestRunPacer', () => {
  it('pauses the runs past the ones that go on while the event loop is busy, newest first, and resumes them when quiet', () => {
    let busy = true;
    // A day-long sample period: only add and remove pace here.
    const pacer = new TestRunPacer(1, () => busy, 86_400_000);
    const [first, second, third] = [fakeRun(), fakeRun(), fakeRun()];
    pacer.add(first);
    expect(first.paused).toBe(false);
    pacer.add(second);
    pacer.add(third);
    expect([first, second, third].map((run) => run.paused)).toEqual([false, true, true]);
    // The oldest ends: the next one goes on at once.
    pacer.remove(first);
    expect([second, third].map((run) => run.paused)).toEqual([false, true]);
    busy = false;
    pacer.remove(second);
    pacer.add(second);
    expect([third, second].map((run) => run.paused)).toEqual([false, false]);
    pacer.remove(third);
    pacer.remove(second);
  });

  it('samples the event loop on its timer while more runs run than go on when busy', async () => {
    let busy = false;
    let samples = 0;
    const pacer = new TestRunPacer(
      1,
      () => {
        samples += 1;
        return busy;
      },
      5,
    );
    const [first, second] = [fakeRun(), fakeRun()];
    pacer.add(first);
    expect(samples).toBe(0); // one run: nothing to pace, no sample taken
    pacer.add(second);
    busy = true;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect([first.paused, second.paused]).toEqual([false, true]);
    busy = false;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(second.paused).toBe(false);
    pacer.remove(second);
    const taken = samples;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(samples).toBe(taken); // the timer stopped with one run left
    pacer.remove(first);
  });
});
