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
import { PluginFileReconciler } from '../../src/community-plugins/plugin-file-reconciler';
import { loadConfig } from '../../src/config/app-config';
import { Outbox } from '../../src/outbox/outbox.service';
import type { AppConfig } from '../../src/config/app-config';
import { emptyDatabase, testDatabaseUrl } from './database';
import { checkAnswersAgainstOpenApi } from './openapi-responses';
import { FakeClock } from './fake-clock';
import { MailService } from '../../src/mail/mail.service';
import { SmtpSink } from './smtp-sink';

export const TEST_JWT_SECRET = 'e2e-secret-that-is-long-enough-for-hs256-0123456789';

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
 * first, sending mail to `smtp` when given; only the clock is the test's.
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
  logger?: Array<'log' | 'error' | 'warn'>;
}): Promise<TestApp> {
  const { smtp } = options;
  const config = loadConfig(
    {
      DATABASE_URL: options.databaseUrl,
      JWT_SECRET: TEST_JWT_SECRET,
      BCRYPT_COST: '4',
      RATE_LIMIT: 'off',
      LOG_LEVEL: 'silent',
      SMTP_HOST: smtp ? '127.0.0.1' : undefined,
      SMTP_PORT: smtp ? String(smtp.port) : undefined,
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
    logger: options.logger ?? ['error'],
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
    close: () => app.close(),
  };
}
