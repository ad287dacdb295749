import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import Piscina from 'piscina';
import type { EntityManager } from 'typeorm';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Transactions } from '../database/transactions';
import { Metrics } from '../metrics/metrics';
import { Outbox, outboxJob } from '../outbox/outbox.service';
import type { MailTask, MailThreadSettings } from './mail-thread';

export interface Mail {
  to: string;
  subject: string;
  html: string;
}

export class MailDeliveryError extends Error {}

const MAIL_JOB = 'mail';

/** The outbox job of a mail, for a process that queues one without this service (svc-admin). */
export const mailJob = (mail: Mail, now: Date) => outboxJob(MAIL_JOB, mail, now);
/** SMTP conversations the thread holds at once: mostly waiting on the server. */
const CONVERSATIONS = 16;
/** The thread gives the CPU up to everything else whenever it wants it (the bcrypt threads: 10). */
const NICE_INCREMENT = 19;
/** A handed-off mail goes to the thread at a random moment within this (see handOff). */
const HANDOFF_SPREAD_MS = 1_000;

/**
 * Mail leaves through one thread of its own (src/mail/mail-thread.ts): what nodemailer costs
 * per mail, several milliseconds of CPU, is not spent on the event loop that answers
 * requests, so a mail going out does not show in the response time of the requests around it.
 */
@Injectable()
export class MailService implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('Mail');
  private readonly thread: Piscina<MailTask, void>;
  /** Each handed-off delivery, with what starts it at once. */
  private readonly handedOff = new Map<Promise<void>, () => void>();

  constructor(
    private readonly outbox: Outbox,
    private readonly transactions: Transactions,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    const settings: MailThreadSettings = { smtp: config.smtp, from: config.mailFrom };
    this.thread = new Piscina({
      // The compiled thread beside this module; under Jest, the built one (see jest.config.js).
      filename: require.resolve('./mail-thread'),
      minThreads: 1,
      maxThreads: 1,
      idleTimeout: Infinity,
      concurrentTasksPerWorker: CONVERSATIONS,
      niceIncrement: NICE_INCREMENT,
      workerData: settings,
    });
  }

  onModuleInit(): void {
    this.outbox.handle(MAIL_JOB, (mail) => this.send(mail as Mail));
  }

  /**
   * Queues the mail in the caller's transaction: it goes out once that commits (the caller
   * nudges the outbox), and an SMTP outage delays it instead of losing it.
   */
  queue(manager: EntityManager, mail: Mail): Promise<void> {
    return this.outbox.enqueue(manager, MAIL_JOB, mail);
  }

  /** Sends the mail (or, without SMTP, prints its text to stdout) and waits until it is out. */
  async send(mail: Mail): Promise<void> {
    try {
      await this.thread.run({ ...mail, deliver: true });
    } catch (error) {
      this.metrics.mailFailures.inc();
      // A warning: the outbox tries again, and logs an error only when it gives up.
      this.logger.warn(`Mail "${mail.subject}" to ${mail.to} failed: ${(error as Error).message}`);
      throw new MailDeliveryError('Email could not be sent');
    }
  }

  /**
   * Gives the mail to the thread at a random moment within the next HANDOFF_SPREAD_MS and
   * returns at once; with `deliver` false the thread drops it. The caller's work is then the
   * same whether a mail goes out or not, nothing on the event loop waits for the SMTP server,
   * and the CPU a real delivery takes (on another core, at the lowest priority) does not fall
   * on the requests right after the caller's (see docs/decisions/activation-links-by-address.md).
   * A delivery that fails is queued as a mail job, which the outbox retries; a crash before
   * the SMTP server took the mail loses it.
   */
  handOff(mail: Mail, deliver: boolean): void {
    let start!: () => void;
    const started = new Promise<void>((resolve) => (start = resolve));
    const timer = setTimeout(() => start(), Math.random() * HANDOFF_SPREAD_MS);
    const delivery = started
      .then(() => this.thread.run({ ...mail, deliver }))
      .catch(async (error: unknown) => {
        this.metrics.mailFailures.inc();
        this.logger.warn(`Mail "${mail.subject}" to ${mail.to} failed: ${(error as Error).message}; queued`);
        await this.queue(this.transactions.manager, mail);
        this.outbox.nudge();
      })
      .catch((error: unknown) =>
        this.logger.error(`Mail "${mail.subject}" to ${mail.to} lost: ${(error as Error).message}`),
      )
      .finally(() => this.handedOff.delete(delivery));
    this.handedOff.set(delivery, () => {
      clearTimeout(timer);
      start();
    });
  }

  /**
   * Hands every waiting mail to the thread now and waits until all are out (or queued again);
   * true when there was one. For a clean stop, and for tests.
   */
  async handedOffSettled(): Promise<boolean> {
    if (this.handedOff.size === 0) return false;
    while (this.handedOff.size > 0) {
      for (const now of this.handedOff.values()) now();
      await Promise.all([...this.handedOff.keys()]);
    }
    return true;
  }

  /** Mails handed off go out (or into the outbox) before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.handedOffSettled();
    await this.thread.close();
  }
}
