import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccessToken } from './access-token.entity';
import { AccessTokensRepository } from './access-tokens.repository';
import { LoginsRepository } from './logins.repository';
import { UserLoginToken } from './user-login-token.entity';
import { User } from './user.entity';
import { UsersRepository } from './users.repository';
import { UsersService } from './users.service';

/**
 * Users, their login tokens and their personal access tokens, shared by the API and svc-admin. Login tokens live here, not
 * in auth: the user rules revoke them (deactivation, an admin's unproven password), and the
 * guard reads a token with its user in one query, so both tables sit behind one repository.
 */
@Module({
  imports: [TypeOrmModule.forFeature([User, UserLoginToken, AccessToken])],
  providers: [UsersRepository, AccessTokensRepository, LoginsRepository, UsersService],
  exports: [UsersRepository, AccessTokensRepository, LoginsRepository, UsersService],
})
export class UsersModule {}
