import { eventLoopLoad, LOAD_SAMPLE_MS } from '../common/event-loop-load';
import type { PausableRun } from '../plugin-jail';

/**
 * While the event loop is busy with other requests, every run is paused, and resumed when it is
 * quiet again. A run at the idle CPU priority still takes a core whenever the event loop waits on
 * the network for an instant, and the requests beside it wait that long: on 2 cores two spinning
 * runs put the GETs' p99 at 1.8 to 3.3x idle, one at 1.8x, none while busy 1.1 to 1.2x
 * (docs/benchmarks.md). Its timer runs only while there is a run to pause.
 */
export class TestRunPacer {
  private readonly runs = new Set<PausableRun>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly loopBusy: () => boolean = eventLoopLoad(),
    private readonly sampleMs = LOAD_SAMPLE_MS,
  ) {}

  /** A run whose plugin has started. */
  add(run: PausableRun): void {
    this.runs.add(run);
    this.pace();
  }

  /** A run that ended. */
  remove(run: PausableRun): void {
    if (this.runs.delete(run)) this.pace();
  }

  private pace(): void {
    const busy = this.runs.size > 0 && this.loopBusy();
    for (const run of this.runs) {
      if (busy) run.pause();
      else run.resume();
    }
    if (this.runs.size > 0 && this.timer === null) {
      this.timer = setInterval(() => this.pace(), this.sampleMs);
      this.timer.unref();
    } else if (this.runs.size === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}
