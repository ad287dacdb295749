import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { configureApp } from './bootstrap';
import { createHttpAdapter } from './http/http-adapter';
import { AppLogger } from './logging/app-logger';
import { ConfigError } from './config/app-config';
import type { AppConfig } from './config/app-config';
import { configFromEnvironment } from './config/environment';
import { enableGracefulShutdown } from './graceful-shutdown';
import { waitForDatabase } from './database/wait-for-database';
import pino from 'pino';

function loadConfigOrExit(): AppConfig {
  try {
    return configFromEnvironment();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  const config = loadConfigOrExit();
  // Before Nest: a database that is not there yet is waited for, one log line per try, and
  // one that never comes is one line on stderr (below), not a framework stack trace.
  const startupLog = pino({ level: config.logLevel });
  await waitForDatabase(config.database, {
    waitMs: config.databaseStartupWaitMs,
    attemptTimeoutMs: config.databaseQueryTimeoutMs,
    onRetry: (line) => startupLog.warn({ context: 'Database' }, line),
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config),
    createHttpAdapter(),
    {
      bodyParser: false,
      bufferLogs: true,
    },
  );
  const logger = app.get(AppLogger);
  app.useLogger(logger);
  enableGracefulShutdown(app, logger, config.shutdownGraceMs);
  await configureApp(app);
  await app.listen(config.port, config.host);
  const database =
    config.database.type === 'sqlite' ? `SQLite ${config.database.path}` : `MySQL ${config.database.host}`;
  logger.log(
    `svc-api listening on http://${config.host}:${config.port} (${database}), ready in ${Math.round(performance.now() - started)} ms`,
    'Main',
  );
}

main().catch((error: unknown) => {
  process.stderr.write(
    `svc-api failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
