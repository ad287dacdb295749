import { Module } from '@nestjs/common';
import { TargetsModule } from '../targets/targets.module';
import { UsersModule } from '../users/users.module';
import { SessionStoreModule } from './session-store.module';
import { SessionsController } from './sessions.controller';
import { SessionsService } from './sessions.service';

@Module({
  // Sessions check target ownership through the targets module; the tables both use are the store's.
  imports: [SessionStoreModule, TargetsModule, UsersModule],
  controllers: [SessionsController],
  providers: [SessionsService],
  exports: [SessionsService, SessionStoreModule],
})
export class SessionsModule {}
