import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest as Request } from 'fastify';
import { map, Observable } from 'rxjs';
import type { AuthUser } from '../../common/decorators';
import { success } from '../../common/envelopes';
import { UserPlugin } from '../user-plugin.entity';
import { PLUGIN_AUDIENCE, PluginAudience, viewFor } from './plugin-audience';

/**
 * Handlers return entities; this turns every plugin in the result into the view that the
 * route's audience and the caller get, and wraps the result in the success envelope. A
 * plugin returned by a route that names no audience is a programming error, not a leak.
 */
@Injectable()
export class PluginViewInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const audience = this.reflector.get<PluginAudience | undefined>(PLUGIN_AUDIENCE, context.getHandler());
    const caller = context.switchToHttp().getRequest<Request & { user?: AuthUser }>().user;
    return next.handle().pipe(map((data: unknown) => success(render(data, audience, caller))));
  }
}

function render(value: unknown, audience: PluginAudience | undefined, caller: AuthUser | undefined): unknown {
  if (value instanceof UserPlugin) {
    if (!audience || !caller) throw new Error('A plugin reached a response without a view');
    return viewFor(audience, caller, value);
  }
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((item) => render(item, audience, caller));
  if (value !== null && typeof value === 'object') {
    if (Object.getPrototypeOf(value) !== Object.prototype)
      throw new Error('Only plain data reaches a response');
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, render(item, audience, caller)]),
    );
  }
  return value;
}
