import { getPythonParser } from './parser';
import type { ValidationResult } from './types';
import { validate } from './validator';

/**
 * A ValidatorPool thread (piscina): one plugin per task, answered with its verdict.
 * validate() never throws; if it did, the task would fail and the pool would reject the
 * upload closed.
 */
function validateInThread(source: Uint8Array): Promise<ValidationResult> {
  // Buffers arrive as plain Uint8Arrays; wrapping shares the memory instead of copying it.
  return validate(Buffer.from(source.buffer, source.byteOffset, source.byteLength));
}

// piscina awaits the exported promise before the thread takes its first task, so loading the
// grammar (once per thread, then cached) is not counted in a plugin's time. A failed load is
// retried by validate(), which then rejects the plugin as an internal error.
export default getPythonParser()
  .catch(() => undefined)
  .then(() => validateInThread);
