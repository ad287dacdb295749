import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { DatabasePoolLoadWatch } from './database-pool-load';
import { dataSourceOptions } from './data-source-options';
import { installAutocommitRetry } from './deadlock';
import { Installation } from './installation';
import { QueryDeadline } from './query-deadline';
import { SchemaMigrator, SCHEMA_UPGRADE } from './schema-migrator';
import type { SchemaUpgrade } from './schema-upgrade';
import { PlainReads } from './plain-reads';
import { SqliteTransactionGate } from './sqlite-transaction-gate';
import { Transactions } from './transactions';

export interface DatabaseModuleOptions {
  /** The entities whose older tables are brought up to date, and how (see schema-upgrade.ts). */
  upgrade: SchemaUpgrade;
  /**
   * `at-start`: the API migrates before it serves. `on-demand`: nothing is migrated until
   * SchemaMigrator.bringUpToDate() is called, so svc-admin's read-only commands write nothing.
   */
  migrate: 'at-start' | 'on-demand';
}

/** The data source, the transactions every feature's repository joins, and the schema's upkeep. Global. */
@Module({})
export class DatabaseModule {
  static forRoot(options: DatabaseModuleOptions): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [APP_CONFIG],
          useFactory: (config: AppConfig) => ({
            ...dataSourceOptions(config.database, config.databaseQueryTimeoutMs),
            autoLoadEntities: true,
            retryAttempts: 0,
          }),
          dataSourceFactory: async (dataSourceOptions) => {
            const dataSource = await new DataSource(dataSourceOptions!).initialize();
            if (dataSource.options.type === 'better-sqlite3') SqliteTransactionGate.install(dataSource);
            installAutocommitRetry(dataSource);
            if (options.migrate === 'at-start') {
              try {
                await new SchemaMigrator(dataSource, options.upgrade).bringUpToDate();
              } catch (error) {
                await dataSource.destroy();
                throw error;
              }
            }
            return dataSource;
          },
        }),
      ],
      providers: [
        PlainReads,
        QueryDeadline,
        DatabasePoolLoadWatch,
        Transactions,
        Installation,
        SchemaMigrator,
        { provide: SCHEMA_UPGRADE, useValue: options.upgrade },
      ],
      exports: [PlainReads, Transactions, SchemaMigrator, Installation],
    };
  }
}
