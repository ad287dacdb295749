import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { AccountModule } from '../account/account.module';
import { SecondFactorModule } from '../second-factor/second-factor.module';
import { UsersModule } from '../users/users.module';
import { AdminGuard } from './admin.guard';
import { AuthController } from './auth.controller';
import { AuthService } from './auth.service';
import { JwtAuthGuard } from './jwt-auth.guard';
import { TokenService } from './token.service';

@Module({
  imports: [AccountModule, UsersModule, SecondFactorModule, JwtModule.register({})],
  controllers: [AuthController],
  providers: [
    AuthService,
    TokenService,
    JwtAuthGuard,
    AdminGuard,
    // Order matters: authentication first, then the admin check that reads its result. The
    // same instances judge the answers decided before Nest's pipeline (early-revalidation.ts).
    { provide: APP_GUARD, useExisting: JwtAuthGuard },
    { provide: APP_GUARD, useExisting: AdminGuard },
  ],
  exports: [TokenService, JwtAuthGuard, AdminGuard],
})
export class AuthModule {}
