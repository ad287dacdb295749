import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Clock } from '../common/clock';
import { Transactions } from '../database/transactions';
import { Metrics } from '../metrics/metrics';
import type { OutboxJob } from './outbox-job.entity';
import { OutboxRepository } from './outbox.repository';

/** Does one job; see Outbox.handle for what `manager` is. */
export type OutboxHandler = (payload: unknown, manager: EntityManager) => Promise<void>;

interface Registered {
  handler: OutboxHandler;
  inTransaction: boolean;
}

/** How often every process looks for due jobs; a nudge after a commit starts at once. */
export const OUTBOX_POLL_MS = 1_000;
/** A worker's hold on a job; a worker that dies mid-job lets it go again after this. */
export const OUTBOX_LEASE_MS = 60_000;
/** Retries wait 5 s, 10 s, 20 s, ... up to 10 minutes, with jitter. */
export const OUTBOX_FIRST_RETRY_MS = 5_000;
export const OUTBOX_MAX_RETRY_MS = 600_000;
/** A job still failing this long after it was written is dropped, with a log line. */
export const OUTBOX_GIVE_UP_AFTER_MS = 24 * 3_600_000;
const BATCH = 20;

/**
 * A durable outbox. Work that must follow a commit (a mail) is written as a row in the same
 * transaction, so it exists exactly when its record does, and survives crashes and outages.
 * Every API process runs a worker: it claims due jobs with a conditional UPDATE (a lease),
 * so no two workers run one job at once. Delivery outside the database (SMTP) is at least
 * once: a crash between sending and removing the job sends again. (An activation mail is
 * the exception: its job hands the mail to the mail thread and ends; see MailService.handOff.)
 */
@Injectable()
export class Outbox implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Outbox');
  private readonly handlers = new Map<string, Registered>();
  private running: Promise<number> | null = null;
  private queued: Promise<number> | null = null;
  private timer?: NodeJS.Timeout;
  private stopped = true;

  constructor(
    private readonly jobs: OutboxRepository,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
  ) {
    metrics.watchOutbox(() => jobs.count());
  }

  /**
   * With `inTransaction`, the handler's writes through `manager` commit together with the
   * job's removal: for work that is all in the database. Otherwise (a mail: the outside world)
   * the handler runs outside any transaction, which must never wait on a remote server, and
   * the job is removed after it.
   */
  handle(kind: string, handler: OutboxHandler, options: { inTransaction?: boolean } = {}): void {
    this.handlers.set(kind, { handler, inTransaction: options.inTransaction ?? false });
  }

  /** Writes the job within the caller's transaction; call nudge() once that has committed. */
  async enqueue(manager: EntityManager, kind: string, payload: object): Promise<void> {
    await this.jobs.insert(manager, outboxJob(kind, payload, this.clock.now()));
  }

  /** Looks for due jobs now instead of at the next poll. */
  nudge(): void {
    if (!this.stopped) void this.runPass();
  }

  /** Runs passes until none finds a due job: what tests and a clean stop wait for. */
  async drain(): Promise<void> {
    while ((await this.runPass()) > 0);
  }

  onApplicationBootstrap(): void {
    this.stopped = false;
    this.schedule();
  }

  /** Before the database closes: no new pass, and the one under way ends. */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.queued;
    await this.running;
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      void this.runPass().then(() => {
        if (!this.stopped) this.schedule();
      });
    }, OUTBOX_POLL_MS);
    this.timer.unref();
  }

  /**
   * One pass at a time per process; asks made during a pass get one more pass after it. A
   * pass that did work is followed by another, for the jobs its handlers wrote.
   */
  private runPass(): Promise<number> {
    if (!this.running) {
      this.running = this.pass().finally(() => (this.running = null));
      void this.running.then((claimed) => {
        if (claimed > 0) this.nudge();
      });
      return this.running;
    }
    this.queued ??= this.running.then(() => {
      this.queued = null;
      return this.runPass();
    });
    return this.queued;
  }

  /** Never throws: a database outage is logged and the next pass tries again. */
  private async pass(): Promise<number> {
    try {
      const due = await this.jobs.dueIds(this.clock.now(), BATCH);
      let claimed = 0;
      for (const id of due) if (await this.runJob(id)) claimed += 1;
      return claimed;
    } catch (error) {
      this.logger.warn(`Outbox pass failed: ${messageOf(error)}`);
      return 0;
    }
  }

  private async runJob(id: number): Promise<boolean> {
    const now = this.clock.now();
    if (!(await this.jobs.claim(id, now, new Date(now.getTime() + OUTBOX_LEASE_MS)))) return false;
    const job = await this.jobs.findById(id);
    if (!job) return false;
    try {
      const registered = this.handlers.get(job.kind);
      if (!registered) throw new Error(`No handler for outbox jobs of kind ${job.kind}`);
      const payload: unknown = JSON.parse(job.payload);
      if (registered.inTransaction) {
        await this.transactions.run(async (manager) => {
          await registered.handler(payload, manager);
          await this.jobs.delete(id, manager);
        });
      } else {
        await registered.handler(payload, this.transactions.manager);
        await this.jobs.delete(id);
      }
    } catch (error) {
      await this.failed(job, now, messageOf(error));
    }
    return true;
  }

  private async failed(job: OutboxJob, now: Date, message: string): Promise<void> {
    // Kinds are the handlers' names (`mail`, ...), a fixed set; an unknown one is counted as such.
    this.metrics.outboxFailures.inc({ kind: this.handlers.has(job.kind) ? job.kind : 'unknown' });
    const label = `Outbox job ${job.id} (${job.kind}), attempt ${job.attempts}`;
    if (now.getTime() - job.createdAt.getTime() >= OUTBOX_GIVE_UP_AFTER_MS) {
      await this.jobs.delete(job.id);
      this.logger.error(`${label} failed: ${message}; given up after 24 hours, job dropped`);
      return;
    }
    const base = Math.min(OUTBOX_MAX_RETRY_MS, OUTBOX_FIRST_RETRY_MS * 2 ** Math.max(0, job.attempts - 1));
    const delay = Math.round(base * (0.8 + Math.random() * 0.4));
    await this.jobs.reschedule(job.id, new Date(now.getTime() + delay), message.slice(0, 255));
    this.logger.warn(`${label} failed: ${message}; next attempt in ${Math.round(delay / 1000)} s`);
  }
}

/**
 * A new job, due at once. Processes without the worker (svc-admin) write one with it in their
 * own transaction; an API process works it.
 */
export function outboxJob(kind: string, payload: object, now: Date): Omit<OutboxJob, 'id'> {
  return {
    kind,
    payload: JSON.stringify(payload),
    attempts: 0,
    nextAttemptAt: now,
    lockedUntil: null,
    lastError: null,
    createdAt: now,
  };
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
