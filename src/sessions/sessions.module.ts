import { forwardRef, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TargetsModule } from '../targets/targets.module';
import { UsersModule } from '../users/users.module';
import { SessionLimits } from './session-limits';
import { SessionTarget } from './session-target.entity';
import { Session } from './session.entity';
import { SessionsController } from './sessions.controller';
import { SessionsRepository } from './sessions.repository';
import { SessionsService } from './sessions.service';

@Module({
  // Each needs the other: sessions check target ownership, and new targets join the active session.
  imports: [TypeOrmModule.forFeature([Session, SessionTarget]), forwardRef(() => TargetsModule), UsersModule],
  controllers: [SessionsController],
  providers: [SessionsService, SessionsRepository, SessionLimits],
  exports: [SessionsService, SessionsRepository, SessionLimits],
})
export class SessionsModule {}
