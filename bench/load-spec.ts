/** What the main thread asks the load worker for, and what it gets back: plain data only. */

export interface UploadBody {
  /** Each request gets `${namePrefix}${pid}-${n}` as its plugin name, so every upload is a new plugin. */
  namePrefix: string;
  source: string;
}

export interface LoadSpec {
  title: string;
  /** Origin, e.g. http://127.0.0.1:43210 */
  origin: string;
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** A multipart plugin upload built per request instead of `body`. */
  upload?: UploadBody;
  connections: number;
  /** Seconds. */
  duration: number;
  /** Requests per second over all connections; unlimited when absent. */
  overallRate?: number;
  /** Seconds to wait before starting, when several loads run side by side. */
  startDelay?: number;
  /** Every answer must have this status and contain this text, else it counts as a failure. */
  expectStatus: number;
  expectBodyIncludes: string;
}

export interface LoadJob {
  /** Seconds of unmeasured load (the first spec alone) so the JIT and the pools are warm. */
  warmup: number;
  /** Run side by side; one result each, in the same order. */
  specs: LoadSpec[];
}

/** One run as the load generator saw it; load.ts merges runs and computes the figures. */
export interface RawLoad {
  title: string;
  /** Seconds. */
  duration: number;
  /** Answers by HTTP status. */
  statuses: Record<string, number>;
  /** Answers without the expected status or body, plus connection errors and timeouts. */
  failures: number;
  /** Milliseconds, of the answers with the expected status. */
  latencies: number[];
}

export interface LoadResult {
  title: string;
  requestsPerSecond: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  total: number;
  duration: number;
  statuses: Record<string, number>;
  failures: number;
  /** CPU time of the server process per answer, milliseconds; null where loads were mixed. */
  cpuMsPerRequest: number | null;
  /** Share of the machine's CPU that other processes used meanwhile (0..1). */
  otherLoad: number;
}
