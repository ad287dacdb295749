export const PLUGIN_GROUPS = ['web', 'network', 'auxiliary'] as const;
export type PluginGroup = (typeof PLUGIN_GROUPS)[number];

export const PLUGIN_TYPES = ['active', 'passive', 'semi_passive', 'external', 'grep'] as const;
export type PluginType = (typeof PLUGIN_TYPES)[number];

export const PLUGIN_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type PluginStatus = (typeof PLUGIN_STATUSES)[number];

/** Seconds a plugin may run; the admin view shows it, the runner enforces it. */
export const EXECUTION_TIMEOUT = { min: 10, max: 900, default: 300 } as const;

export const NAME_LENGTH = { min: 3, max: 128 } as const;
export const DESCRIPTION_LENGTH = { min: 1, max: 2000 } as const;
export const AUTHOR_LENGTH = { min: 1, max: 128 } as const;
export const REJECTION_REASON_MAX_LENGTH = 2000;

/** The multipart part that carries the plugin source. */
export const PLUGIN_FILE_PART = 'plugin_file';

export const PLUGIN_NOT_FOUND = 'Plugin not found';
