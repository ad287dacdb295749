import { Logger, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CommunityPluginsController } from './community-plugins.controller';
import { PluginCatalogueService } from './catalogue/plugin-catalogue.service';
import { CatalogueRepository } from './catalogue/catalogue.repository';
import { ManifestRepository } from './manifest/manifest.repository';
import { ManifestFilesService } from './manifest/manifest-files.service';
import { AnswerVersionRepository } from './caching/answer-version.repository';
import { ConditionalAnswerInterceptor } from './caching/conditional-answers';
import { PluginFileReconciler } from './files/plugin-file-reconciler';
import { PluginReviewService } from './review/plugin-review.service';
import { PluginFilesModule } from './plugin-files.module';
import { PluginUploadService } from './upload/plugin-upload.service';
import { UserPlugin } from './shared/user-plugin.entity';
import { PluginVersion } from './shared/plugin-version.entity';
import { PluginVersionsRepository } from './shared/plugin-versions.repository';
import { PluginVersionsService } from './review/plugin-versions.service';
import { PluginRatingsService } from './catalogue/plugin-ratings.service';
import { PluginManifestService } from './manifest/plugin-manifest.service';
import { PluginVersionsUpgrade } from './files/plugin-versions-upgrade';
import { OwnPluginInterceptor } from './upload/own-plugin.interceptor';
import { PluginRecheckService } from './review/plugin-recheck.service';
import { PluginRechecksRepository } from './review/plugin-rechecks.repository';
import { Metrics } from '../metrics/metrics';
import { ValidatorPool } from '../plugin-validator';
import { UsersModule } from '../users/users.module';
import { PluginTestRunRecordsModule } from '../plugin-test-runs/plugin-test-run-records.module';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { DiffPool } from './review/diff-pool';

@Module({
  imports: [
    TypeOrmModule.forFeature([UserPlugin, PluginVersion]),
    UsersModule,
    PluginFilesModule,
    PluginTestRunRecordsModule,
  ],
  controllers: [CommunityPluginsController],
  providers: [
    PluginCatalogueService,
    CatalogueRepository,
    ManifestRepository,
    ManifestFilesService,
    AnswerVersionRepository,
    ConditionalAnswerInterceptor,
    PluginReviewService,
    PluginUploadService,
    PluginFileReconciler,
    PluginVersionsRepository,
    PluginVersionsService,
    PluginRatingsService,
    PluginManifestService,
    PluginVersionsUpgrade,
    OwnPluginInterceptor,
    PluginRechecksRepository,
    PluginRecheckService,
    // A factory: the pool takes options (for tests), not injected dependencies. Nest still
    // calls its onApplicationShutdown, which closes the workers after the HTTP server.
    {
      provide: ValidatorPool,
      inject: [Metrics],
      useFactory: (metrics: Metrics) => {
        const logger = new Logger('ValidatorPool');
        const pool = new ValidatorPool({
          warn: (message) => logger.warn(message),
          waited: metrics.queueWaited('validator'),
        });
        metrics.watchQueue('validator', () => pool.load);
        return pool;
      },
    },
    {
      provide: DiffPool,
      inject: [APP_CONFIG, Metrics],
      useFactory: (config: AppConfig, metrics: Metrics) => {
        const pool = new DiffPool({
          threads: config.pluginDiffThreads,
          maxQueued: config.pluginDiffMaxQueued,
          waited: metrics.queueWaited('diff'),
        });
        metrics.watchQueue('diff', () => pool.load);
        return pool;
      },
    },
  ],
  // The test-runs read a version through the same digest check (src/plugin-test-runs).
  exports: [PluginCatalogueService, PluginFilesModule, PluginReviewService, PluginVersionsRepository],
})
export class CommunityPluginsModule {}
