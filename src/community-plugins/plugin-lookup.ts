import { HttpStatus } from '@nestjs/common';
import type { Repository } from 'typeorm';
import { ApiError } from '../common/api-error';
import { PLUGIN_NOT_FOUND } from './plugin-constants';
import type { UserPlugin } from './user-plugin.entity';

export const pluginNotFound = () => new ApiError(HttpStatus.NOT_FOUND, PLUGIN_NOT_FOUND);

/** `id` as ParseIdPipe read it: `null` names no plugin. */
export async function findPluginOr404(
  plugins: Repository<UserPlugin>,
  id: number | null,
): Promise<UserPlugin> {
  const plugin = id === null ? null : await plugins.findOneBy({ id });
  if (!plugin) throw pluginNotFound();
  return plugin;
}
