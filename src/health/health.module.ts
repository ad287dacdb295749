import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { CommunityPluginsModule } from '../community-plugins/community-plugins.module';
import { HealthController } from './health.controller';
import { Readiness } from './readiness';

@Module({
  imports: [TerminusModule.forRoot({ logger: false }), CommunityPluginsModule],
  controllers: [HealthController],
  providers: [Readiness],
  exports: [Readiness],
})
export class HealthModule {}
