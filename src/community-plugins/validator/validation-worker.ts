import { parentPort } from 'node:worker_threads';
import { WORKER_READY, type WorkerReply } from '../../common/worker-pool';
import { getPythonParser } from './parser';
import type { ValidationResult } from './types';
import { validate } from './validator';

if (!parentPort) throw new Error('validation-worker runs only in a worker thread (see ValidatorPool)');
const port = parentPort;

/**
 * A ValidatorPool thread: one plugin per message, answered with its verdict. validate() never
 * throws; if it did, the unhandled rejection would end this thread and the pool would fail the
 * upload closed.
 */
function answer(source: Uint8Array): void {
  // Buffers arrive as plain Uint8Arrays; wrapping shares the memory instead of copying it.
  const buffer = Buffer.from(source.buffer, source.byteOffset, source.byteLength);
  void validate(buffer).then((result) => {
    const reply: WorkerReply<ValidationResult> = { ok: true, result };
    port.postMessage(reply);
  });
}

// The grammar loads once per thread and stays cached for the next plugins. Loading is not the
// plugin's time: the pool starts a job's timeout at WORKER_READY, so no plugin may start before
// it (jobs sent meanwhile wait in the port until the listener is attached). A failed load is
// retried by validate(), which then rejects the plugin as an internal error.
void getPythonParser()
  .catch(() => undefined)
  .then(() => {
    port.postMessage(WORKER_READY);
    port.on('message', answer);
  });
