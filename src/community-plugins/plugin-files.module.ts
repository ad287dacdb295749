import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PluginDigestCheck } from './plugin-digest-check';
import { PluginDirectoryClaim } from './plugin-directory-claim';
import { PendingApprovals } from './pending-approvals';
import { PluginStorage } from './plugin-storage';
import { PluginsRepository } from './plugins.repository';
import { UserPlugin } from './user-plugin.entity';

/** The plugin rows and their files, without the HTTP side: shared by the marketplace and svc-admin. */
@Module({
  imports: [TypeOrmModule.forFeature([UserPlugin])],
  providers: [PluginsRepository, PluginStorage, PluginDigestCheck, PluginDirectoryClaim, PendingApprovals],
  exports: [PluginsRepository, PluginStorage, PluginDigestCheck, PluginDirectoryClaim, PendingApprovals],
})
export class PluginFilesModule {}
