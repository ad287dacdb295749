import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { configureApp } from './bootstrap';
import { ConfigError } from './config/app-config';
import { configFromEnvironment } from './config/environment';

async function main(): Promise<void> {
  const started = performance.now();
  let config;
  try {
    config = configFromEnvironment();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    bodyParser: false,
  });
  configureApp(app);
  await app.listen(config.port, config.host);
  const database =
    config.database.type === 'sqlite' ? `SQLite ${config.database.path}` : `MySQL ${config.database.host}`;
  new Logger('Main').log(
    `svc-api listening on http://${config.host}:${config.port} (${database}), ready in ${Math.round(performance.now() - started)} ms`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(
    `svc-api failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
