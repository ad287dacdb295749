import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';

/** A failed task is tried again after this long, doubled each time up to the maximum. */
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;

interface Task {
  name: string;
  run: () => Promise<void>;
}

/**
 * The start's work that grows with the data (issue 22: at 100,000 plugins it held the start
 * for 1.5 s): features add it while the app boots, and it runs once the HTTP server listens,
 * so the process listens as soon as Nest is up. Readiness (/health/ready) is down until every
 * task has succeeded, so a balancer sends nothing before; a task that fails is logged and
 * tried again, with a growing pause, until it succeeds or the app stops. Only what answers
 * need belongs here; work that should merely begin after the start (and never holds
 * readiness) is added with `afterStart`.
 *
 * `begin()` is called by whatever listens: src/main.ts, the bench, the e2e tests' app.
 */
@Injectable()
export class StartupWork implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Main');
  private readonly tasks: Task[] = [];
  private readonly followers: Array<() => void> = [];
  private begun?: Promise<void>;
  private done = false;
  private stopping = false;
  private readonly stop = new AbortController();

  /** Work that holds readiness until it has run once, tasks in the order added. */
  add(name: string, run: () => Promise<void>): void {
    if (this.begun) throw new Error(`Start-up task ${name} added after the start-up work began`);
    this.tasks.push({ name, run });
  }

  /** Work begun once the start-up tasks are done, not waited for. */
  afterStart(begin: () => void): void {
    if (this.done) begin();
    else this.followers.push(begin);
  }

  /** Whether every start-up task has run (readiness waits for it). */
  get isDone(): boolean {
    return this.done;
  }

  /** Runs the tasks once; resolves when they are done (or the app stops first). */
  begin(): Promise<void> {
    this.begun ??= this.runAll();
    return this.begun;
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    this.stop.abort();
    await this.begun;
  }

  private async runAll(): Promise<void> {
    const started = performance.now();
    for (const task of this.tasks) {
      for (let pause = FIRST_RETRY_MS; ; pause = Math.min(pause * 2, MAX_RETRY_MS)) {
        if (this.stopping) return;
        try {
          await task.run();
          break;
        } catch (error) {
          this.logger.error(
            `Start-up task ${task.name} failed (${(error as Error).message}); trying again in ${pause} ms`,
          );
          await sleep(pause, undefined, { signal: this.stop.signal }).catch(() => undefined);
        }
      }
    }
    this.done = true;
    if (this.tasks.length > 0) {
      const names = this.tasks.map((task) => task.name).join(', ');
      this.logger.log(
        `Start-up work done (${names}) ${Math.round(performance.now() - started)} ms after listening`,
      );
    }
    for (const begin of this.followers.splice(0)) {
      try {
        begin();
      } catch (error) {
        this.logger.error(`Work after the start could not begin: ${(error as Error).message}`);
      }
    }
  }
}
