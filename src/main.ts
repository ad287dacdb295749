import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { configureApp } from './bootstrap';
import {
  ForeignPluginDirectoryError,
  PluginDirectoryClaim,
} from './community-plugins/files/plugin-directory-claim';
import { createHttpAdapter } from './http/http-adapter';
import { AppLogger } from './logging/app-logger';
import { ConfigError } from './config/app-config';
import type { AppConfig } from './config/app-config';
import { configFromEnvironment } from './config/environment';
import { enableGracefulShutdown } from './graceful-shutdown';
import { StartupWork } from './common/startup-work';
import { Readiness } from './health/readiness';
import { waitForDatabase } from './database/wait-for-database';
import { createPino } from './logging/log-destination';
import { MetricsListener } from './metrics/metrics-listener';

function loadConfigOrExit(): AppConfig {
  try {
    return configFromEnvironment();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}

/** Why uploads and reconciliation are refused, when the plugin directory is another database's. */
async function pluginDirectoryRefusal(app: NestFastifyApplication): Promise<string | null> {
  try {
    await app.get(PluginDirectoryClaim).claim();
    return null;
  } catch (error) {
    // Other faults (a full disk, permissions) are logged where they happen and may heal.
    return error instanceof ForeignPluginDirectoryError ? error.message : null;
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  const config = loadConfigOrExit();
  // Before Nest: a database that is not there yet is waited for, one log line per try, and
  // one that never comes is one line on stderr (below), not a framework stack trace.
  const startupLog = createPino(config.logLevel, config.logFormat);
  await waitForDatabase(config.database, {
    waitMs: config.databaseStartupWaitMs,
    attemptTimeoutMs: config.databaseQueryTimeoutMs,
    onRetry: (line) => startupLog.warn({ context: 'Database' }, line),
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config),
    createHttpAdapter(config),
    {
      bodyParser: false,
      bufferLogs: true,
    },
  );
  const logger = app.get(AppLogger);
  app.useLogger(logger);
  const readiness = app.get(Readiness);
  enableGracefulShutdown(app, logger, config.shutdownGraceMs, {
    ms: config.shutdownDrainMs,
    onDrain: () => readiness.stop(),
  });
  await configureApp(app);
  await app.listen(config.port, config.host);
  const database =
    config.database.type === 'sqlite' ? `SQLite ${config.database.path}` : `MySQL ${config.database.host}`;
  const metrics = app.get(MetricsListener).address;
  const listening =
    `svc-api listening on http://${config.host}:${config.port} (${database})` +
    (metrics === null
      ? ''
      : `, metrics on http://${metrics.family === 'IPv6' ? `[${metrics.address}]` : metrics.address}:${metrics.port}/metrics`);
  const refusal = await pluginDirectoryRefusal(app);
  if (refusal === null) {
    logger.log(`${listening} after ${Math.round(performance.now() - started)} ms`, 'Main');
  } else {
    logger.error(`${listening}, NOT READY: ${refusal}`, 'Main');
  }
  // What grows with the data runs now, while readiness waits for it (it logs when done).
  void app.get(StartupWork).begin();
}

main().catch((error: unknown) => {
  process.stderr.write(
    `svc-api failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
