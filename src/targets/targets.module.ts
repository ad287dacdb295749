import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MultipartFieldsMiddleware } from '../common/multipart-fields.middleware';
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
export class TargetsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    // Request arguments may come as multipart form fields too, as on the account endpoints.
    consumer.apply(MultipartFieldsMiddleware).forRoutes(TargetsController);
  }
}
