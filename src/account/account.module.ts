import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
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
export class AccountModule {}
