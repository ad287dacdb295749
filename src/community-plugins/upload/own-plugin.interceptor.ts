import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Observable } from 'rxjs';
import type { AuthUser } from '../../common/decorators';
import { parseId } from '../../common/request-params';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { RateLimiter } from '../../rate-limit/rate-limiter';
import { pluginNotFound } from '../shared/plugin-lookup';
import { PluginsRepository } from '../shared/plugins.repository';

const HOUR_MS = 3_600_000;

/**
 * Before a new version's body is read: the plugin must be the caller's (404 otherwise, as for
 * a plugin they cannot see), and the attempt counts against the uploads per hour, since each
 * costs the validator as an upload does.
 */
@Injectable()
export class OwnPluginInterceptor implements NestInterceptor {
  constructor(
    private readonly plugins: PluginsRepository,
    private readonly limiter: RateLimiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const request = context.switchToHttp().getRequest<FastifyRequest & { user?: AuthUser }>();
    const caller = request.user as AuthUser;
    const id = parseId(String((request.params as Record<string, string>).id ?? ''));
    const plugin = id === null ? null : await this.plugins.findById(id);
    if (!plugin || plugin.userId !== caller.id) throw pluginNotFound();
    if (this.config.rateLimit) {
      await this.limiter.take(`upload:${caller.id}`, {
        name: 'uploads',
        limit: this.config.pluginUploadsPerHour,
        windowMs: HOUR_MS,
      });
    }
    return next.handle();
  }
}
