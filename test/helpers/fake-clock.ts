import { Clock } from '../../src/common/clock';

/** Real time plus an offset that a test moves, instead of sleeping; or, frozen, a fixed instant. */
export class FakeClock extends Clock {
  private offsetMs = 0;
  private frozenAtMs: number | null = null;

  override now(): Date {
    return new Date((this.frozenAtMs ?? Date.now()) + this.offsetMs);
  }

  advance(ms: number): void {
    this.offsetMs += ms;
  }

  /** Stops real time: a test whose bound is tighter than a busy machine's pauses gets exact instants. */
  freeze(): void {
    this.frozenAtMs ??= Date.now();
  }

  reset(): void {
    this.offsetMs = 0;
    this.frozenAtMs = null;
  }
}
