import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersModule } from '../users/users.module';
import { PluginTestRun } from './plugin-test-run.entity';
import { PluginTestRunsRepository } from './plugin-test-runs.repository';
import { TestRunSummaries } from './test-run-summaries';

/** The test-runs' table alone: the marketplace's diff names a version's runs through it. */
@Module({
  imports: [TypeOrmModule.forFeature([PluginTestRun]), UsersModule],
  providers: [PluginTestRunsRepository, TestRunSummaries],
  exports: [PluginTestRunsRepository, TestRunSummaries],
})
export class PluginTestRunRecordsModule {}
