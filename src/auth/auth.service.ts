import { Injectable } from '@nestjs/common';
import { fitsBcrypt, PasswordHasher } from '../account/password-hasher.service';
import { UsersService } from '../users/users.service';
import { AccountResponse, accountFail, accountSuccess } from '../common/envelopes';
import { isMissing } from '../common/request-params';
import type { LoginSeen } from '../account-logins/login-seen';
import { SECOND_FACTOR_MESSAGES } from '../second-factor/second-factor-messages';
import { SecondFactorService } from '../second-factor/second-factor.service';
import { TokenService } from './token.service';

/** Compared instead of a password over bcrypt's 72 bytes, which is refused whatever it is. */
const OVERLONG_PLACEHOLDER = 'overlong password placeholder';

@Injectable()
export class AuthService {
  constructor(
    private readonly users: UsersService,
    private readonly hasher: PasswordHasher,
    private readonly tokens: TokenService,
    private readonly secondFactor: SecondFactorService,
  ) {}

  async login(
    identifier: string | undefined,
    password: string | undefined,
    otp?: string,
    seen?: LoginSeen,
  ): Promise<AccountResponse> {
    if (isMissing(identifier)) return accountFail('Missing email or username value');
    if (isMissing(password)) return accountFail('Missing password value');
    const user = await this.users.findByEmailOrName(identifier);
    // Unknown users, and passwords bcrypt would cut at 72 bytes, cost one bcrypt comparison
    // too (against a dummy hash), so timing tells neither who exists nor which was refused.
    const passwordMatches = fitsBcrypt(password)
      ? await this.hasher.verify(password, user?.password)
      : await this.hasher.verify(OVERLONG_PLACEHOLDER, null);
    // A locked account (past the bound on failed logins) refuses every password alike, the
    // right one too, until its owner sets a new one through the OTP mail.
    if (!user || !passwordMatches || user.lockedAt) return accountFail('Invalid login credentials');
    // An admin's password must have been set through a mailed OTP (promotion clears any
    // other); this also covers a row written before that rule.
    if (this.users.isAdmin(user) && !user.passwordSetViaOtp) return accountFail('Invalid login credentials');
    // Only once the password is right, and read after the user's row: a second factor turned on
    // since then has raised the credential generation, so the token this records never works.
    if ((await this.secondFactor.checkLogin(user.id, otp)) === 'refused') {
      return accountFail(SECOND_FACTOR_MESSAGES.loginRefused);
    }
    // Not yet confirmed, or taken out of service by an operator.
    if (!user.isActive || user.deactivatedAt) return accountFail('Your account is not active');
    return accountSuccess({ 'jwt-token': await this.tokens.issue(user, seen) });
  }

  async logout(tokenHash: string): Promise<AccountResponse> {
    await this.tokens.revoke(tokenHash);
    return accountSuccess('Logged out');
  }
}
