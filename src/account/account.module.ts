import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MultipartFieldsMiddleware } from '../common/multipart-fields.middleware';
import { AccountController } from './account.controller';
import { AccountService } from './account.service';
import { EmailConfirmation } from './email-confirmation.entity';
import { OtpService } from './otp.service';
import { PasswordHasher } from './password-hasher.service';
import { User } from './user.entity';
import { UsersService } from './users.service';

@Module({
  imports: [TypeOrmModule.forFeature([User, EmailConfirmation])],
  controllers: [AccountController],
  providers: [AccountService, UsersService, OtpService, PasswordHasher],
  exports: [UsersService, PasswordHasher],
})
export class AccountModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(MultipartFieldsMiddleware).forRoutes(AccountController);
  }
}
