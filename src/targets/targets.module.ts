import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MultipartFieldsMiddleware } from '../common/multipart-fields.middleware';
import { Target } from './target.entity';
import { TargetsController } from './targets.controller';
import { TargetsService } from './targets.service';

@Module({
  imports: [TypeOrmModule.forFeature([Target])],
  controllers: [TargetsController],
  providers: [TargetsService],
  exports: [TargetsService],
})
export class TargetsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    // Request arguments may come as multipart form fields too, as on the account endpoints.
    // Named by path and method: with the controller's catch-all 405 route, forRoutes(controller)
    // would run the parser twice on one request.
    consumer.apply(MultipartFieldsMiddleware).forRoutes({ path: 'targets', method: RequestMethod.POST });
  }
}
