import { Module, OnApplicationBootstrap } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersModule } from '../users/users.module';
import { UsersService } from '../users/users.service';
import { AccountController } from './account.controller';
import { AccountRepository } from './account.repository';
import { AccountService } from './account.service';
import { ActivationLinkSweeper } from './activation-link-sweeper';
import { EmailConfirmation } from './email-confirmation.entity';
import { ListedAdminGrants } from './listed-admin-grants';
import { OtpService } from './otp.service';
import { PasswordHasher } from './password-hasher.service';

@Module({
  imports: [TypeOrmModule.forFeature([EmailConfirmation]), UsersModule],
  controllers: [AccountController],
  providers: [
    AccountService,
    AccountRepository,
    ActivationLinkSweeper,
    ListedAdminGrants,
    OtpService,
    PasswordHasher,
  ],
  // AccountService: the pages of src/pages confirm emails through it, as the API does.
  exports: [PasswordHasher, AccountService],
})
export class AccountModule implements OnApplicationBootstrap {
  constructor(
    private readonly users: UsersService,
    private readonly grants: ListedAdminGrants,
  ) {}

  /**
   * SVC_ADMIN_EMAILS is applied, and its grants recorded, when the API starts. Here, not in
   * the users module, because svc-admin shares that module and must not write at its start
   * (`list` writes nothing).
   */
  async onApplicationBootstrap(): Promise<void> {
    await this.users.promoteListedAdmins(this.grants);
  }
}
