import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MultipartFieldsMiddleware } from '../common/multipart-fields.middleware';
import { TargetsModule } from '../targets/targets.module';
import { UsersModule } from '../users/users.module';
import { SessionTarget } from './session-target.entity';
import { Session } from './session.entity';
import { SessionsController } from './sessions.controller';
import { SessionsRepository } from './sessions.repository';
import { SessionsService } from './sessions.service';

@Module({
  imports: [TypeOrmModule.forFeature([Session, SessionTarget]), TargetsModule, UsersModule],
  controllers: [SessionsController],
  providers: [SessionsService, SessionsRepository],
  exports: [SessionsService],
})
export class SessionsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    // Request arguments may come as multipart form fields too, as on the account endpoints.
    consumer.apply(MultipartFieldsMiddleware).forRoutes(SessionsController);
  }
}
