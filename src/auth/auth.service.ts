import { Injectable } from '@nestjs/common';
import { PasswordHasher } from '../account/password-hasher.service';
import { UsersService } from '../users/users.service';
import { AccountResponse, accountFail, accountSuccess } from '../common/envelopes';
import { isMissing } from '../common/request-params';
import { TokenService } from './token.service';

@Injectable()
export class AuthService {
  constructor(
    private readonly users: UsersService,
    private readonly hasher: PasswordHasher,
    private readonly tokens: TokenService,
  ) {}

  async login(identifier: string | undefined, password: string | undefined): Promise<AccountResponse> {
    if (isMissing(identifier)) return accountFail('Missing email or username value');
    if (isMissing(password)) return accountFail('Missing password value');
    const user = await this.users.findByEmailOrName(identifier);
    // Unknown users cost one bcrypt comparison too, so timing does not tell who exists.
    const passwordMatches = await this.hasher.verify(password, user?.password);
    if (!user || !passwordMatches) return accountFail('Invalid login credentials');
    // Not yet confirmed, or taken out of service by an operator.
    if (!user.isActive || user.deactivatedAt) return accountFail('Your account is not active');
    return accountSuccess({ 'jwt-token': await this.tokens.issue(user) });
  }

  async logout(tokenHash: string): Promise<AccountResponse> {
    await this.tokens.revoke(tokenHash);
    return accountSuccess('Logged out');
  }
}
