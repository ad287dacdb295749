import { Module } from '@nestjs/common';
import { AccountModule } from '../account/account.module';
import { UsersModule } from '../users/users.module';
import { AccountLoginsController } from './account-logins.controller';
import { AccountLoginsService } from './account-logins.service';
import { CurrentPassword } from './current-password';
import { PasswordGuesses } from './password-guesses';

/** The caller's logins, the password change and the current-password check; the login records and the guard's lookup are in users. */
@Module({
  imports: [UsersModule, AccountModule],
  controllers: [AccountLoginsController],
  providers: [AccountLoginsService, PasswordGuesses, CurrentPassword],
  // The second factor's enrolment asks for the current password as the password change does.
  exports: [CurrentPassword],
})
export class AccountLoginsModule {}
