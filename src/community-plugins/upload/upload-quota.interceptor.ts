import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import type { FastifyRequest as Request } from 'fastify';
import type { Observable } from 'rxjs';
import type { AuthUser } from '../../common/decorators';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { RateLimiter } from '../../rate-limit/rate-limiter';
import { PluginUploadService } from './plugin-upload.service';

const HOUR_MS = 3_600_000;

/**
 * The uploader's own limits, checked before a byte of the body is parsed, so a flood costs
 * neither parsing nor validation: attempts per hour (every attempt counts, a refused one too,
 * since each costs the validator), and plugins waiting for review. The pending cap is checked
 * again, atomically, when the row is written.
 */
@Injectable()
export class UploadQuotaInterceptor implements NestInterceptor {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly uploads: PluginUploadService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const uploader = context.switchToHttp().getRequest<Request>().user as AuthUser;
    if (this.config.rateLimit) {
      await this.limiter.take(`upload:${uploader.id}`, {
        name: 'uploads',
        limit: this.config.pluginUploadsPerHour,
        windowMs: HOUR_MS,
      });
    }
    await this.uploads.checkPendingCap(uploader.id);
    return next.handle();
  }
}
