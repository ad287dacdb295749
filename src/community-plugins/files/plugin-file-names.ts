/** The names uploads are stored under (see storedFileName in plugin-storage.ts). */
export const STORED_FILE_NAME = /^[A-Za-z0-9_-]+_[0-9a-f]{16}\.py$/;
/** Temporary names of the versions that wrote a file before renaming it into place. */
export const LEGACY_TEMPORARY_NAME = /^\.upload-[0-9a-f]+\.tmp$/;
