import { availableParallelism } from 'node:os';
import { eventLoopLoad, LOAD_SAMPLE_MS } from '../common/event-loop-load';
import type { PausableRun } from '../plugin-jail';

/**
 * While the event loop is busy with other requests, one run fewer than the cores goes on (never
 * none): the newer runs are paused until it is quiet again, the oldest go on and end first. A
 * run at the idle CPU priority still takes the core whenever the event loop waits on the network
 * for an instant, and the requests beside it wait that long: on 2 cores two spinning runs put
 * the GETs' p99 at 1.9 to 3.3x idle (docs/benchmarks.md), as two hashing threads did before
 * bcrypt's pool made the same choice (docs/decisions/bcrypt-threads.md). Its timer runs only
 * while more runs run than go on when busy.
 */
export class TestRunPacer {
  private readonly runs: PausableRun[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly goOnWhileBusy = Math.max(1, availableParallelism() - 1),
    private readonly loopBusy: () => boolean = eventLoopLoad(),
    private readonly sampleMs = LOAD_SAMPLE_MS,
  ) {}

  /** A run whose plugin has started. */
  add(run: PausableRun): void {
    this.runs.push(run);
    this.pace();
  }

  /** A run that ended: the next one goes on at once. */
  remove(run: PausableRun): void {
    const index = this.runs.indexOf(run);
    if (index < 0) return;
    this.runs.splice(index, 1);
    this.pace();
  }

  private pace(): void {
    const busy = this.runs.length > this.goOnWhileBusy && this.loopBusy();
    this.runs.forEach((run, index) => (busy && index >= this.goOnWhileBusy ? run.pause() : run.resume()));
    if (this.runs.length > this.goOnWhileBusy) {
      if (this.timer === null) {
        this.timer = setInterval(() => this.pace(), this.sampleMs);
        this.timer.unref();
      }
    } else if (this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}
