import { collectDefaultMetrics, Counter, Gauge, Histogram, type Metric, Registry } from 'prom-client';
import { RequestHistogram } from './request-histogram';

/** The work queues in front of the pools and the jail, as their label names them. */
export type QueueName = 'bcrypt' | 'validator' | 'diff' | 'test-run';

/** What a queue shows the metrics: read at each scrape, so its jobs pay nothing for it. */
export interface QueueLoad {
  /** Jobs admitted and waiting for their turn. */
  readonly waiting: number;
  /** Jobs started and not yet settled. */
  readonly running: number;
}

/** Told, as each job starts, how long it waited for its turn (0 for one that did not). */
export type WaitObserver = (seconds: number) => void;

/** The database's connections: mysql2's pool, or SQLite's one connection behind its gate. */
export interface DatabasePoolLoad {
  busy: number;
  idle: number;
  /** Queries (or transactions) waiting for a connection. */
  waiting: number;
}

/** Up to a minute: the validator's and the jail's queues wait in seconds, the pools in milliseconds. */
const WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60];

/**
 * Every metric the service exposes, on a registry of its own (one per app: the tests run
 * several in one process). No label holds a user, an address, a plugin or a raw path: a
 * route's template, a method, a status, a queue, a job kind or a limit's name, each from a
 * fixed set. Gauges are read at scrape time from what the pools and the database already
 * keep; counters and histograms are written where the thing happens.
 *
 * With `enabled` false (no METRICS_PORT and no METRICS_TOKEN) nothing reads the registry:
 * the request hook and the process metrics are not installed, and the rest costs an add.
 */
export class Metrics {
  readonly registry = new Registry();

  /** Observed by every request: a histogram of our own, prom-client's exposition (request-histogram.ts). */
  readonly httpRequests = this.registered(
    new RequestHistogram(
      'svc_http_request_duration_seconds',
      'Answered HTTP requests by route template (unmatched: no route), method and status, and their time',
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    ),
  );

  private readonly queueWaits = new Histogram({
    name: 'svc_queue_wait_seconds',
    help: 'How long jobs waited for a worker, by queue (bcrypt, validator, diff, test-run)',
    labelNames: ['queue'] as const,
    buckets: WAIT_BUCKETS,
    registers: [this.registry],
  });

  readonly queryDeadlineHits = new Counter({
    name: 'svc_db_query_deadline_exceeded_total',
    help: 'Database queries that ran past DATABASE_QUERY_TIMEOUT_SECONDS (their connection was dropped; the request answered 503)',
    registers: [this.registry],
  });

  readonly outboxFailures = new Counter({
    name: 'svc_outbox_job_failures_total',
    help: 'Failed attempts of outbox jobs, by job kind (each is retried, or dropped after 24 hours)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly mailFailures = new Counter({
    name: 'svc_mail_failures_total',
    help: 'Mails the SMTP server did not take (the outbox tries them again)',
    registers: [this.registry],
  });

  readonly rateLimitRefusals = new Counter({
    name: 'svc_rate_limit_refusals_total',
    help: 'Requests refused by a rate limit (429, or an account locked), by limit',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  private readonly queues = new Map<QueueName, () => QueueLoad>();
  private databasePool: (() => DatabasePoolLoad | null) | null = null;
  private outboxBacklog: (() => Promise<number>) | null = null;

  constructor(readonly enabled: boolean) {
    const queues = this.queues;
    const gauge = (name: string, help: string, read: (load: QueueLoad) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['queue'] as const,
        registers: [this.registry],
        collect() {
          for (const [queue, load] of queues) this.set({ queue }, read(load()));
        },
      });
    gauge('svc_queue_waiting', 'Jobs waiting for a worker, by queue', (load) => load.waiting);
    gauge('svc_queue_running', 'Jobs running, by queue', (load) => load.running);

    const readPool = () => this.databasePool?.() ?? null;
    new Gauge({
      name: 'svc_db_pool_connections',
      help: 'Database connections by state (busy, idle); SQLite has one',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const pool = readPool();
        if (pool === null) return this.reset();
        this.set({ state: 'busy' }, pool.busy);
        this.set({ state: 'idle' }, pool.idle);
      },
    });
    new Gauge({
      name: 'svc_db_pool_waiting',
      help: 'Queries waiting for a database connection (SQLite: for the open transaction to end)',
      registers: [this.registry],
      collect() {
        const pool = readPool();
        if (pool === null) return this.reset();
        this.set(pool.waiting);
      },
    });
    const readBacklog = () => this.outboxBacklog?.() ?? Promise.reject(new Error('no outbox'));
    new Gauge({
      name: 'svc_outbox_jobs',
      help: 'Jobs in the outbox (mails and other work after a commit), due or waiting for a retry',
      registers: [this.registry],
      async collect() {
        try {
          this.set(await readBacklog());
        } catch {
          // The database did not answer: no value rather than a stale one, and the scrape goes on.
          this.reset();
        }
      },
    });
    // The event-loop delay sampled every 100 ms, not prom-client's 10: each sample wakes an idle
    // process, and at 10 ms those wake-ups cost more CPU than every request's hook (a scrape
    // still holds 150 samples; docs/decisions/metrics.md).
    if (enabled) collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 100 });
  }

  /** A metric of our own on the registry, which formats it as its own (RequestHistogram). */
  private registered<M extends RequestHistogram>(metric: M): M {
    this.registry.registerMetric(metric as unknown as Metric);
    return metric;
  }

  /** Shows what `load` reads as queue `name`'s gauges, at each scrape. */
  watchQueue(name: QueueName, load: () => QueueLoad): void {
    this.queues.set(name, load);
  }

  /** The observer of queue `name`'s waits, for its constructor. */
  queueWaited(name: QueueName): WaitObserver {
    const child = this.queueWaits.labels(name);
    return (seconds) => child.observe(seconds);
  }

  watchDatabasePool(read: () => DatabasePoolLoad | null): void {
    this.databasePool = read;
  }

  watchOutbox(backlog: () => Promise<number>): void {
    this.outboxBacklog = backlog;
  }

  /** The exposition text, and its content type. */
  async scrape(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
