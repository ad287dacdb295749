/**
 * Child processes and temporary directories must not outlive the script, whichever way it
 * ends: normally, on an error, or on a signal. Each resource registers how to release it
 * gracefully (awaited, on the normal path) and abruptly (synchronous, for the `exit` event,
 * when nothing can be awaited any more).
 */
interface Resource {
  name: string;
  graceful: () => Promise<void>;
  abrupt: () => void;
}

const resources: Resource[] = [];
let installed = false;
let running: Promise<void> | undefined;

/** True once cleanup has begun: load loops stop sending, so the app can drain and stop. */
export const isAborting = (): boolean => running !== undefined;

export function registerCleanup(name: string, graceful: () => Promise<void>, abrupt: () => void): () => void {
  const resource: Resource = { name, graceful, abrupt };
  resources.push(resource);
  return () => {
    const index = resources.indexOf(resource);
    if (index >= 0) resources.splice(index, 1);
  };
}

/** Releases everything, newest first; a resource that does not let go in time is released abruptly. */
export function runCleanup(): Promise<void> {
  running ??= (async () => {
    while (resources.length > 0) {
      const resource = resources.pop()!;
      try {
        await withTimeout(resource.graceful(), 20_000);
      } catch (error) {
        process.stderr.write(`cleanup of ${resource.name}: ${String(error)}; forcing\n`);
        try {
          resource.abrupt();
        } catch {
          // nothing more can be done
        }
      }
    }
  })();
  return running;
}

/** Runs `main`, then cleans up and exits with its code; signals and crashes clean up too. */
export function runScript(main: () => Promise<number>): void {
  if (!installed) {
    installed = true;
    process.on('exit', () => {
      for (const resource of resources.splice(0).reverse()) {
        try {
          resource.abrupt();
        } catch {
          // the process is going away anyway
        }
      }
    });
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.once(signal, () => {
        process.stderr.write(`\n${signal} received, cleaning up\n`);
        void runCleanup().finally(() => process.exit(130));
      });
    }
    const crash = (error: unknown) => {
      process.stderr.write(
        `fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      void runCleanup().finally(() => process.exit(1));
    };
    process.on('uncaughtException', crash);
    process.on('unhandledRejection', crash);
  }
  main().then(
    (code) => runCleanup().finally(() => process.exit(code)),
    (error: unknown) => {
      process.stderr.write(
        `failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      void runCleanup().finally(() => process.exit(1));
    },
  );
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what = 'operation'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
