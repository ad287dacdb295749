import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CommunityPluginsModule } from '../community-plugins/community-plugins.module';
import { JailAvailability } from './jail-availability';
import { PluginTestRun } from './plugin-test-run.entity';
import { PluginTestRunsController } from './plugin-test-runs.controller';
import { PluginTestRunsRepository } from './plugin-test-runs.repository';
import { PluginTestRunsService } from './plugin-test-runs.service';

/** The reviewers' test-runs over HTTP; the jail itself is src/plugin-test-run (no Nest inside). */
@Module({
  imports: [TypeOrmModule.forFeature([PluginTestRun]), CommunityPluginsModule],
  controllers: [PluginTestRunsController],
  providers: [JailAvailability, PluginTestRunsRepository, PluginTestRunsService],
})
export class PluginTestRunsModule {}
