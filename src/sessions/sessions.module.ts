import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MultipartFieldsMiddleware } from '../common/multipart-fields.middleware';
import { TargetsModule } from '../targets/targets.module';
import { SessionTarget } from './session-target.entity';
import { Session } from './session.entity';
import { SESSION_PATHS, SessionsController } from './sessions.controller';
import { SessionsService } from './sessions.service';

@Module({
  imports: [TypeOrmModule.forFeature([Session, SessionTarget]), TargetsModule],
  controllers: [SessionsController],
  providers: [SessionsService],
  exports: [SessionsService],
})
export class SessionsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    // Request arguments may come as multipart form fields too, as on the account endpoints.
    // Named by path and method: with the controller's catch-all 405 route, forRoutes(controller)
    // would run the parser twice on one request.
    consumer
      .apply(MultipartFieldsMiddleware)
      .forRoutes(
        ...SESSION_PATHS.flatMap((path) =>
          [RequestMethod.POST, RequestMethod.PATCH].map((method) => ({ path, method })),
        ),
      );
  }
}
