import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CommunityPluginsController } from './community-plugins.controller';
import { PluginCatalogueService } from './plugin-catalogue.service';
import { PluginFileReconciler } from './plugin-file-reconciler';
import { PluginReviewService } from './plugin-review.service';
import { PluginStorage } from './plugin-storage';
import { PluginUploadService } from './plugin-upload.service';
import { PluginsRepository } from './plugins.repository';
import { UserPlugin } from './user-plugin.entity';
import { ValidatorPool } from './validator';
import { UsersModule } from '../users/users.module';

@Module({
  imports: [TypeOrmModule.forFeature([UserPlugin]), UsersModule],
  controllers: [CommunityPluginsController],
  providers: [
    PluginCatalogueService,
    PluginReviewService,
    PluginUploadService,
    PluginsRepository,
    PluginStorage,
    PluginFileReconciler,
    // A factory: the pool takes options (for tests), not injected dependencies. Nest still
    // calls its onApplicationShutdown, which closes the threads after the HTTP server.
    { provide: ValidatorPool, useFactory: () => new ValidatorPool() },
  ],
  exports: [PluginCatalogueService, PluginStorage],
})
export class CommunityPluginsModule {}
