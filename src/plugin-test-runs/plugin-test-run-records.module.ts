import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PluginTestRun } from './plugin-test-run.entity';
import { PluginTestRunsRepository } from './plugin-test-runs.repository';

/** The test-runs' table alone: the marketplace's diff names a version's newest run through it. */
@Module({
  imports: [TypeOrmModule.forFeature([PluginTestRun])],
  providers: [PluginTestRunsRepository],
  exports: [PluginTestRunsRepository],
})
export class PluginTestRunRecordsModule {}
