import type { ValidationResult } from './types';
import { ValidatorPool } from './validator-pool';

let shared: ValidatorPool | undefined;

/**
 * Statically validates a plugin's bytes with the analyser (CPython's own parser and scopes, on a
 * shared one-worker pool). Never throws and never accepts what it could not fully check: every
 * failure, including its own, becomes a violation. The server uses its own ValidatorPool.
 */
export function validate(source: Buffer): Promise<ValidationResult> {
  return sharedPool().validate(source);
}

/** The analyser's view of each program (statements, scopes, bindings): see python/view.py. */
export function programViews(sources: Buffer[]): Promise<unknown[]> {
  return sharedPool().views(sources);
}

function sharedPool(): ValidatorPool {
  shared ??= new ValidatorPool({
    size: 1,
    maxQueued: Number.MAX_SAFE_INTEGER,
    maxQueuedPerUploader: Number.MAX_SAFE_INTEGER,
    // The differential test sends a few hundred programs in one request.
    timeoutMs: 60_000,
  });
  return shared;
}

/** Stops the shared pool's worker (tests and scripts call it so the process can exit). */
export async function closeSharedValidator(): Promise<void> {
  const pool = shared;
  shared = undefined;
  await pool?.onApplicationShutdown();
}
