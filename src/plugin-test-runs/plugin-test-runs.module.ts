import { Module } from '@nestjs/common';
import { CommunityPluginsModule } from '../community-plugins/community-plugins.module';
import { JailAvailability } from './jail-availability';
import { PluginTestRunRecordsModule } from './plugin-test-run-records.module';
import { PluginTestRunsController } from './plugin-test-runs.controller';
import { PluginTestRunsService } from './plugin-test-runs.service';

/** The reviewers' test-runs over HTTP; the jail itself is src/plugin-jail (no Nest inside). */
@Module({
  imports: [PluginTestRunRecordsModule, CommunityPluginsModule],
  controllers: [PluginTestRunsController],
  providers: [JailAvailability, PluginTestRunsService],
})
export class PluginTestRunsModule {}
