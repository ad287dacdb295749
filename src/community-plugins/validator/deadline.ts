/** Thrown when validation runs past its time budget; the plugin is rejected as too large. */
export class AnalysisTimeoutError extends Error {
  constructor(readonly budgetMs: number) {
    super(`Validation took longer than ${budgetMs} ms`);
  }
}

/**
 * A time budget shared by parsing and the rules. Size limits keep ordinary plugins far below
 * it; it exists so that no crafted input can hold the event loop for long.
 */
export class Deadline {
  private readonly expiresAt: number;

  constructor(readonly budgetMs: number) {
    this.expiresAt = performance.now() + budgetMs;
  }

  hasPassed(): boolean {
    return performance.now() > this.expiresAt;
  }

  throwIfPassed(): void {
    if (this.hasPassed()) throw new AnalysisTimeoutError(this.budgetMs);
  }
}
