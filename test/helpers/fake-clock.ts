import { Clock } from '../../src/common/clock';

/** Real time plus an offset that a test moves, instead of sleeping. */
export class FakeClock extends Clock {
  private offsetMs = 0;

  override now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  advance(ms: number): void {
    this.offsetMs += ms;
  }

  reset(): void {
    this.offsetMs = 0;
  }
}
