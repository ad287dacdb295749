import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Target } from './target.entity';
import { TargetsController } from './targets.controller';
import { TargetsRepository } from './targets.repository';
import { TargetsService } from './targets.service';

@Module({
  imports: [TypeOrmModule.forFeature([Target])],
  controllers: [TargetsController],
  providers: [TargetsService, TargetsRepository],
  exports: [TargetsService],
})
export class TargetsModule {}
