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

/** A short version string such as `1.0.0`, `2.1` or `1.0.0-beta.2`. */
export const VERSION_MAX_LENGTH = 32;
export const DEFAULT_VERSION = '1.0.0';
export const VERSION_PATTERN = /^v?\d{1,6}(\.\d{1,6}){0,3}([-+][0-9A-Za-z.-]{1,20})?$/;

/** Tags: lower-case words of letters, digits, `.`, `_`, `+`, `-`, stored in their order, without repeats. */
export const MAX_TAGS = 10;
export const TAG_MAX_LENGTH = 32;
export const TAG_PATTERN = /^[a-z0-9][a-z0-9._+-]*$/;
export const REJECTION_REASON_MAX_LENGTH = 2000;

/** The multipart part that carries the plugin source. */
export const PLUGIN_FILE_PART = 'plugin_file';

export const PLUGIN_NOT_FOUND = 'Plugin not found';
