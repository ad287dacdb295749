import { HttpStatus } from '@nestjs/common';
import { ApiError } from '../../common/api-error';
import { PLUGIN_NOT_FOUND } from './plugin-constants';
import type { PluginsRepository } from './plugins.repository';
import type { UserPlugin } from './user-plugin.entity';

export const pluginNotFound = () => new ApiError(HttpStatus.NOT_FOUND, PLUGIN_NOT_FOUND);

/** `id` as ParseIdPipe read it: `null` names no plugin. */
export async function findPluginOr404(plugins: PluginsRepository, id: number | null): Promise<UserPlugin> {
  const plugin = id === null ? null : await plugins.findById(id);
  if (!plugin) throw pluginNotFound();
  return plugin;
}
