import { DynamicModule, Global, Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Metrics } from './metrics';
import { MetricsListener } from './metrics-listener';

/** The registry every module writes its measures to. Global, as the database is. */
@Global()
@Module({})
export class MetricsModule {
  /** `served`: the API, which serves them when the settings say so; svc-admin keeps none. */
  static forRoot({ served }: { served: boolean }): DynamicModule {
    return {
      module: MetricsModule,
      providers: [
        {
          provide: Metrics,
          inject: [APP_CONFIG],
          useFactory: (config: AppConfig) => new Metrics(served && config.metrics !== null),
        },
        MetricsListener,
      ],
      exports: [Metrics, MetricsListener],
    };
  }
}
