import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest as Request } from 'fastify';
import { map, mergeMap, Observable } from 'rxjs';
import type { AuthUser } from '../../common/decorators';
import { success } from '../../common/envelopes';
import { PluginRechecksRepository } from '../review/plugin-rechecks.repository';
import { UserPlugin } from '../shared/user-plugin.entity';
import { PLUGIN_AUDIENCE, PluginAudience, viewFor } from './plugin-audience';

/**
 * Data a handler already built in its views (the public catalogue, from rows): it is sent as
 * it is, without a second pass over each object. Only views go in here, never an entity.
 */
export class Shown<T extends object> {
  constructor(readonly data: T) {}
}

/**
 * Handlers return entities (or Shown views); this turns every plugin in the result into the view that the
 * route's audience and the caller get, and wraps the result in the success envelope. A
 * plugin returned by a route that names no audience is a programming error, not a leak.
 */
@Injectable()
export class PluginViewInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly rechecks: PluginRechecksRepository,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const audience = this.reflector.get<PluginAudience | undefined>(PLUGIN_AUDIENCE, context.getHandler());
    const caller = context.switchToHttp().getRequest<Request & { user?: AuthUser }>().user;
    if (!caller?.isAdmin || audience === 'uploader') {
      // Readers and uploaders get no verdicts: no query, so no promise per answer either.
      return next
        .handle()
        .pipe(
          map((data: unknown) => (data instanceof Response ? data : success(render(data, audience, caller)))),
        );
    }
    return next.handle().pipe(
      mergeMap(async (data: unknown) => {
        if (data instanceof Response) return data;
        await this.attachRechecks(data);
        return success(render(data, audience, caller));
      }),
    );
  }

  /**
   * The admin view shows the re-check's verdict on the served file: one query for every plugin
   * in the answer. A verdict on other bytes (an older approved version) is not this file's.
   */
  private async attachRechecks(data: unknown): Promise<void> {
    const plugins = collectPlugins(data);
    if (plugins.length === 0) return;
    const verdicts = await this.rechecks.ofPlugins([...new Set(plugins.map((plugin) => plugin.id))]);
    for (const plugin of plugins) {
      const verdict = verdicts.get(plugin.id);
      plugin.recheck =
        verdict && plugin.status === 'approved' && verdict.sha256 === plugin.sha256
          ? { rulesVersion: verdict.rulesVersion, findings: verdict.findings }
          : null;
    }
  }
}

function collectPlugins(value: unknown, found: UserPlugin[] = []): UserPlugin[] {
  if (value instanceof UserPlugin) found.push(value);
  else if (Array.isArray(value)) for (const item of value) collectPlugins(item, found);
  else if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
    for (const item of Object.values(value)) collectPlugins(item, found);
  return found;
}

function render(value: unknown, audience: PluginAudience | undefined, caller: AuthUser | undefined): unknown {
  if (value instanceof Shown) return value.data;
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
