import { ApiIdParam } from '../../openapi/api-docs';
import { PLUGIN_NOT_FOUND } from './plugin-constants';

/** The `:id` of every plugin route. */
export const ApiPluginId = () => ApiIdParam('id');

/** The answer of every plugin route to an id that names no plugin the caller may see. */
export const NOT_FOUND = { 404: [PLUGIN_NOT_FOUND] };
