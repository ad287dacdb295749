import { applyDecorators, SetMetadata } from '@nestjs/common';
import { AdminRoute, Authenticated, RouteOptions } from '../../common/decorators';
import type { AuthUser } from '../../common/decorators';
import type { UserPlugin } from '../shared/user-plugin.entity';
import { toAdminView, toOwnerView, toPublicView } from './plugin-views';

export const PLUGIN_AUDIENCE = 'svc:pluginAudience';

/**
 * Who a route's plugins are shown to:
 * - `uploader`: the caller's own uploads (upload, mine/): owner view.
 * - `catalogue`: the list: admin view for admins, public view for everyone else.
 * - `detail`: one plugin: admin view for admins, owner view for its uploader, else public.
 * - `reviewer`: admin-only routes: admin view.
 */
export type PluginAudience = 'uploader' | 'catalogue' | 'detail' | 'reviewer';

export const ForAudience = (audience: PluginAudience) => SetMetadata(PLUGIN_AUDIENCE, audience);

/**
 * A route that answers plugins: PluginViewInterceptor shows each in the view of `audience`.
 * Reviewer routes are admin routes; the others are open to every authenticated user.
 */
export const PluginView = (audience: PluginAudience, options: RouteOptions) =>
  applyDecorators(
    ForAudience(audience),
    audience === 'reviewer' ? AdminRoute(options) : Authenticated(options),
  );

export function viewFor(audience: PluginAudience, caller: AuthUser, plugin: UserPlugin): object {
  switch (audience) {
    case 'uploader':
      return toOwnerView(plugin);
    case 'catalogue':
      return caller.isAdmin ? toAdminView(plugin) : toPublicView(plugin);
    case 'detail':
      if (caller.isAdmin) return toAdminView(plugin);
      return plugin.userId === caller.id ? toOwnerView(plugin) : toPublicView(plugin);
    case 'reviewer':
      return toAdminView(plugin);
  }
}
