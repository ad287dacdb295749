import { Module } from '@nestjs/common';
import { AccountModule } from '../account/account.module';
import { UsersModule } from '../users/users.module';
import { AccountLoginsController } from './account-logins.controller';
import { AccountLoginsService } from './account-logins.service';
import { PasswordGuesses } from './password-guesses';

/** The caller's logins and the password change; the login records and the guard's lookup are in users. */
@Module({
  imports: [UsersModule, AccountModule],
  controllers: [AccountLoginsController],
  providers: [AccountLoginsService, PasswordGuesses],
})
export class AccountLoginsModule {}
