import { HttpStatus } from '@nestjs/common';
import { ApiError } from '../common/api-error';
import { PLUGIN_NOT_FOUND } from './plugin-constants';
import type { PluginsRepository } from './plugins.repository';
import type { UserPlugin } from './user-plugin.entity';

const MAX_ID = 2_147_483_647;

/** A path id as the database knows them: a positive integer; anything else names no plugin. */
export function parsePluginId(raw: string): number | null {
  if (!/^[1-9]\d{0,9}$/.test(raw)) return null;
  const id = Number(raw);
  return id <= MAX_ID ? id : null;
}

export const pluginNotFound = () => new ApiError(HttpStatus.NOT_FOUND, PLUGIN_NOT_FOUND);

export async function findPluginOr404(plugins: PluginsRepository, rawId: string): Promise<UserPlugin> {
  const id = parsePluginId(rawId);
  const plugin = id === null ? null : await plugins.findById(id);
  if (!plugin) throw pluginNotFound();
  return plugin;
}
