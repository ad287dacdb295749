import type { LoggerService } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { AppModule } from '../../src/app.module';
import { configureApp } from '../../src/bootstrap';
import { createHttpAdapter } from '../../src/http/http-adapter';
import { Clock } from '../../src/common/clock';
import { StartupWork } from '../../src/common/startup-work';
import { PluginFileReconciler } from '../../src/community-plugins/files/plugin-file-reconciler';
import { loadConfig } from '../../src/config/app-config';
import { Outbox } from '../../src/outbox/outbox.service';
import type { AppConfig } from '../../src/config/app-config';
import { emptyDatabase, testDatabaseUrl } from './database';
import { checkAnswersAgainstOpenApi } from './openapi-responses';
import { FakeClock } from './fake-clock';
import { MailService } from '../../src/mail/mail.service';
import { SmtpSink } from './smtp-sink';

export const TEST_JWT_SECRET = 'e2e-secret-that-is-long-enough-for-hs256-0123456789';

export interface LogEntry {
  level: 'log' | 'error' | 'warn' | 'debug' | 'verbose' | 'fatal';
  context: string | undefined;
  message: string;
}

/**
 * What the test apps log (Nest's logger: every `new Logger(context)` in the app) goes here,
 * not to the terminal: a passing run prints nothing, and the errors a test provokes on
 * purpose are kept for it to assert on (`appLog.take()`). SVC_TEST_LOG=1 prints them too.
 */
class CapturedLog implements LoggerService {
  private entries: LogEntry[] = [];
  private readonly print = process.env.SVC_TEST_LOG === '1';

  log(message: unknown, ...params: unknown[]): void {
    this.add('log', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.add('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.add('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.add('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.add('verbose', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.add('fatal', message, params);
  }

  /** The entries logged since the last take, at the given levels; they are removed. */
  take(levels: Array<LogEntry['level']> = ['error', 'fatal', 'warn']): LogEntry[] {
    const taken = this.entries.filter((entry) => levels.includes(entry.level));
    this.entries = this.entries.filter((entry) => !levels.includes(entry.level));
    return taken;
  }

  private add(level: LogEntry['level'], message: unknown, params: unknown[]): void {
    const context = typeof params.at(-1) === 'string' ? (params.at(-1) as string) : undefined;
    const text = message instanceof Error ? (message.stack ?? message.message) : String(message);
    // Nest's framework lines at every boot (modules, routes) would only fill the buffer.
    if (level === 'log' && context !== undefined && FRAMEWORK_CONTEXTS.has(context)) return;
    this.entries.push({ level, context, message: text });
    if (this.entries.length > 1000) this.entries.shift();
    if (this.print) process.stderr.write(`${level.toUpperCase()} [${context ?? ''}] ${text}\n`);
  }
}

const FRAMEWORK_CONTEXTS = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
]);

/** The log of every test app this spec file starts (Nest's logger is one per process). */
export const appLog = new CapturedLog();

export interface TestApp {
  app: NestFastifyApplication;
  config: AppConfig;
  clock: FakeClock;
  dataSource: DataSource;
  http: () => ReturnType<typeof request>;
  /** Mail is sent by the outbox worker after the request: this waits until none is due. */
  deliverMail: () => Promise<void>;
  close: () => Promise<void>;
}

/**
 * The real app, on a real database (SQLite, or MariaDB with TEST_DATABASE_URL) emptied
 * first, sending mail to `smtp` (or to a sink of its own); only the clock is the test's.
 */
export async function createTestApp(
  options: { smtp?: SmtpSink; env?: Record<string, string | undefined> } = {},
): Promise<TestApp> {
  const databaseUrl = testDatabaseUrl();
  await emptyDatabase(databaseUrl);
  return bootApp({ ...options, databaseUrl, dataDir: mkdtempSync(join(tmpdir(), 'svc-e2e-data-')) });
}

/**
 * The real app on an existing database, not emptied first: for the tests that start the
 * app more than once on the same data (start-up seeding, the schema upgrade).
 */
export async function bootApp(options: {
  databaseUrl: string;
  dataDir: string;
  smtp?: SmtpSink;
  env?: Record<string, string | undefined>;
}): Promise<TestApp> {
  // Without SMTP the app prints every mail on the test run's own stdout: an app given no sink
  // gets one of its own, whose mail nobody reads (mail-fallback.e2e-spec tests the printing).
  const ownSink = options.smtp ? null : new SmtpSink();
  await ownSink?.start();
  const smtp = options.smtp ?? ownSink!;
  const config = loadConfig(
    {
      DATABASE_URL: options.databaseUrl,
      JWT_SECRET: TEST_JWT_SECRET,
      BCRYPT_COST: '4',
      RATE_LIMIT: 'off',
      LOG_LEVEL: 'silent',
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(smtp.port),
      SMTP_SECURE: 'false',
      SMTP_FROM: 'SVC <svc@test.local>',
      COMMUNITY_PLUGIN_DIR: join(options.dataDir, 'community-plugins'),
      ...options.env,
    },
    options.dataDir,
  );
  const clock = new FakeClock();
  const moduleRef = await Test.createTestingModule({ imports: [AppModule.forRoot(config)] })
    .overrideProvider(Clock)
    .useValue(clock)
    .compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(createHttpAdapter(config), {
    bodyParser: false,
    logger: appLog,
  });
  await configureApp(app);
  checkAnswersAgainstOpenApi(app);
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  // What src/main.ts begins once it listens, and the file pass that follows it in the
  // background: the tests start from a finished start.
  await app.get(StartupWork).begin();
  await app.get(PluginFileReconciler).settled();
  return {
    app,
    config,
    clock,
    dataSource: app.get(DataSource),
    http: () => request(app.getHttpServer()),
    deliverMail: async () => {
      // Jobs, then the activation mails they handed to the mail thread (a failed one is a job again).
      do await app.get(Outbox).drain();
      while (await app.get(MailService).handedOffSettled());
    },
    close: async () => {
      await app.close();
      await ownSink?.stop();
    },
  };
}
