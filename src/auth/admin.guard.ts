import { CanActivate, ExecutionContext, HttpStatus, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest as Request } from 'fastify';
import { ApiError } from '../common/api-error';
import { AuthUser, IS_ADMIN_ONLY } from '../common/decorators';
import { RouteMetadata } from '../common/route-metadata';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { SECOND_FACTOR_MESSAGES } from '../second-factor/second-factor-messages';
import { SecondFactorService } from '../second-factor/second-factor.service';

/**
 * Runs after JwtAuthGuard: routes marked @AdminOnly() need an admin, and with
 * ADMIN_SECOND_FACTOR=required an admin whose TOTP is on (enrolment is no admin route).
 */
@Injectable()
export class AdminGuard implements CanActivate {
  private readonly adminOnly: RouteMetadata<boolean>;
  private readonly secondFactorRequired: boolean;

  constructor(
    reflector: Reflector,
    private readonly secondFactor: SecondFactorService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.adminOnly = new RouteMetadata(reflector, IS_ADMIN_ONLY);
    this.secondFactorRequired = config.adminSecondFactor === 'required';
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!this.adminOnly.of(context)) return true;
    const user = context.switchToHttp().getRequest<Request & { user?: AuthUser }>().user;
    if (!user?.isAdmin) throw new ApiError(HttpStatus.FORBIDDEN, 'Admin privileges required');
    if (this.secondFactorRequired && !(await this.secondFactor.isEnabled(user.id))) {
      throw new ApiError(HttpStatus.FORBIDDEN, SECOND_FACTOR_MESSAGES.adminNeedsEnrolment);
    }
    return true;
  }
}
