/** InnoDB chose this statement as a deadlock victim and rolled it back: running it again is safe. */
export function isDeadlock(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 5; depth += 1) {
    const { code, errno, driverError } = current as {
      code?: unknown;
      errno?: unknown;
      driverError?: unknown;
    };
    if (code === 'ER_LOCK_DEADLOCK' || errno === 1213) return true;
    current = driverError;
  }
  return false;
}

const ATTEMPTS = 5;

/**
 * Runs a statement that commits on its own again when InnoDB picked it as a deadlock victim
 * (concurrent reviews, deletes and uploads lock the same index pages in different orders):
 * the victim was rolled back, so the retry is the statement's first effect.
 */
export async function retryOnDeadlock<T>(statement: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await statement();
    } catch (error) {
      if (attempt >= ATTEMPTS || !isDeadlock(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, attempt * 5 + Math.random() * 10));
    }
  }
}
