import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { AddressInfo } from 'node:net';
import { AppLogger } from '../src/logging/app-logger';
import { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module';
import { configureApp } from '../src/bootstrap';
import { createHttpAdapter } from '../src/http/http-adapter';
import type { AppConfig } from '../src/config/app-config';

export interface AppServer {
  origin: string;
  dataSource: DataSource;
  close(): Promise<void>;
}

/** The real app, built as src/main.ts builds it, listening on a free loopback port. */
export async function startApp(config: AppConfig): Promise<AppServer> {
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config),
    createHttpAdapter(),
    {
      bodyParser: false,
      bufferLogs: true,
    },
  );
  app.useLogger(app.get(AppLogger));
  await configureApp(app);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    dataSource: app.get(DataSource),
    close: async () => {
      // Keep-alive sockets of the load generator would otherwise hold the server open.
      app.getHttpServer().closeAllConnections();
      await app.close();
    },
  };
}
