import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { AddressInfo } from 'node:net';
import { AppLogger } from '../src/logging/app-logger';
import { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module';
import { configureApp } from '../src/bootstrap';
import { StartupWork } from '../src/common/startup-work';
import { PluginRecheckService } from '../src/community-plugins/review/plugin-recheck.service';
import { createHttpAdapter } from '../src/http/http-adapter';
import { loadConfig, type AppConfig } from '../src/config/app-config';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ADMIN_EMAIL } from './seed';

/**
 * The settings every bench run gives the app and the baseline: a database of its own (the
 * given MySQL URL, or SQLite in `workDir`), a random JWT secret, no rate limits, no
 * per-address connection cap, no logs; with BENCH_METRICS=on, metrics kept and served on a
 * listener of their own (METRICS_PORT), as an operator who scrapes the app runs it.
 */
export function benchSettings(
  workDir: string,
  databaseUrl: string | undefined,
  settings: Record<string, string>,
): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl ?? `sqlite:${join(workDir, 'svc.sqlite')}`,
    JWT_SECRET: randomBytes(48).toString('base64url'),
    RATE_LIMIT: 'off',
    LOG_LEVEL: 'silent',
    SVC_ADMIN_EMAILS: ADMIN_EMAIL,
    COMMUNITY_PLUGIN_DIR: join(workDir, 'community-plugins'),
    HOST: '127.0.0.1',
    PORT: '0',
    // Every simulated client is 127.0.0.1: BENCH_CONNECTIONS may be more than one address's cap.
    HTTP_CONNECTIONS_PER_ADDRESS: '0',
    ...(process.env.BENCH_METRICS?.trim() === 'on' ? { METRICS_PORT: '0' } : {}),
    ...settings,
  };
}

/** benchSettings, loaded as the app loads its environment. */
export function benchConfig(
  workDir: string,
  databaseUrl: string | undefined,
  settings: Record<string, string>,
): AppConfig {
  return loadConfig(benchSettings(workDir, databaseUrl, settings), workDir);
}

export interface AppServer {
  origin: string;
  dataSource: DataSource;
  /** Resolves when the start-up work that follows listening is done (readiness is up). */
  ready: Promise<void>;
  /**
   * Resolves after `ready` when the re-check that start-up begins is done too: every approved
   * plugin without a verdict of these rules (a seeded database's) is validated then, which
   * shares the cores with, and writes under, what a bench measures.
   */
  rechecked: Promise<void>;
  close(): Promise<void>;
}

/** The real app, built as src/main.ts builds it, listening on a free loopback port. */
export async function startApp(config: AppConfig): Promise<AppServer> {
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config),
    createHttpAdapter(config),
    {
      bodyParser: false,
      bufferLogs: true,
    },
  );
  app.useLogger(app.get(AppLogger));
  await configureApp(app);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  // As src/main.ts does once it listens.
  const ready = app.get(StartupWork).begin();
  const recheck = app.get(PluginRecheckService);
  return {
    origin: `http://127.0.0.1:${port}`,
    dataSource: app.get(DataSource),
    ready,
    rechecked: ready.then(() => recheck.settled()),
    close: async () => {
      // Keep-alive sockets of the load generator would otherwise hold the server open.
      app.getHttpServer().closeAllConnections();
      await app.close();
    },
  };
}

/** A bench setting from the environment: a positive integer, or `fallback` when unset or empty. */
export function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new Error(`${name} must be a positive integer`);
  return Number(raw);
}

/** A bench's progress line, on standard error (the figures go to standard output). */
export const progress = (text: string) => process.stderr.write(`[bench] ${text}\n`);
