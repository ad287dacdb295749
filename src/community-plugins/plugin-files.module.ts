import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PluginDigestCheck } from './files/plugin-digest-check';
import { PluginDirectoryClaim } from './files/plugin-directory-claim';
import { PendingApprovals } from './review/pending-approvals';
import { PluginStorage } from './files/plugin-storage';
import { PluginsRepository } from './shared/plugins.repository';
import { PluginFilesRepository } from './files/plugin-files.repository';
import { UserPlugin } from './shared/user-plugin.entity';

const PLUGIN_FILES = [
  PluginsRepository,
  PluginFilesRepository,
  PluginStorage,
  PluginDigestCheck,
  PluginDirectoryClaim,
  PendingApprovals,
];

/** The plugin rows and their files, without the HTTP side: shared by the marketplace and svc-admin. */
@Module({
  imports: [TypeOrmModule.forFeature([UserPlugin])],
  providers: PLUGIN_FILES,
  exports: PLUGIN_FILES,
})
export class PluginFilesModule {}
