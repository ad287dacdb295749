import type { MultipartRules } from '../../http/multipart';

/** Enough for a 2000-character reason in any script, and nothing else of size. */
export const REVIEW_FORM: MultipartRules = { fields: 8, fieldSize: 16 * 1024, parts: 8 };
