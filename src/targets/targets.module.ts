import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SessionStoreModule } from '../sessions/session-store.module';
import { UsersModule } from '../users/users.module';
import { Target } from './target.entity';
import { TargetsController } from './targets.controller';
import { TargetsRepository } from './targets.repository';
import { TargetsService } from './targets.service';

@Module({
  // The client's targets page is the active session's: listing reads it, adding joins it.
  imports: [TypeOrmModule.forFeature([Target]), SessionStoreModule, UsersModule],
  controllers: [TargetsController],
  providers: [TargetsService, TargetsRepository],
  exports: [TargetsService],
})
export class TargetsModule {}
