import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { CommunityPluginsModule } from '../community-plugins/community-plugins.module';
import { HealthController } from './health.controller';

@Module({
  imports: [TerminusModule.forRoot({ logger: false }), CommunityPluginsModule],
  controllers: [HealthController],
})
export class HealthModule {}
