import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SessionLimits } from './session-limits';
import { SessionTarget } from './session-target.entity';
import { Session } from './session.entity';
import { SessionsRepository } from './sessions.repository';

/**
 * The sessions' tables and their cap, without the routes: targets join the active session
 * through it, and the sessions module (whose service checks target ownership through the
 * targets module) builds on it, so neither module imports the other back.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Session, SessionTarget])],
  providers: [SessionsRepository, SessionLimits],
  exports: [SessionsRepository, SessionLimits],
})
export class SessionStoreModule {}
