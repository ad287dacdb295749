import { Module } from '@nestjs/common';
import { AccountLoginsModule } from '../account-logins/account-logins.module';
import { AccountModule } from '../account/account.module';
import { UsersModule } from '../users/users.module';
import { SecondFactorStoreModule } from './second-factor-store.module';
import { SecondFactorController } from './second-factor.controller';
import { SecondFactorService } from './second-factor.service';

/** TOTP enrolment (account/totp) and the check login and the admin guard ask of it. */
@Module({
  imports: [SecondFactorStoreModule, UsersModule, AccountModule, AccountLoginsModule],
  controllers: [SecondFactorController],
  providers: [SecondFactorService],
  exports: [SecondFactorService],
})
export class SecondFactorModule {}
