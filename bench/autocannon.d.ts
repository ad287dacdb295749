/**
 * The part of autocannon's API the benchmark uses. @types/autocannon is not installed; this
 * keeps the bench typed without it (remove this file if the package is ever added).
 */
declare module 'autocannon' {
  function autocannon(options: autocannon.Options): autocannon.Instance;

  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      setupRequest?: (request: Request, context: Record<string, unknown>) => Request | null | undefined;
    }

    interface Options {
      url: string;
      title?: string;
      connections?: number;
      /** Seconds. */
      duration?: number;
      amount?: number;
      pipelining?: number;
      /** Seconds. */
      timeout?: number;
      overallRate?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      requests?: Request[];
      verifyBody?: (body: string) => boolean;
    }

    /**
     * What a run resolves to inside a worker thread: autocannon aggregates (histograms,
     * requests.average) only on the main thread, so only the raw counters are here.
     */
    interface Result {
      /** Seconds. */
      duration: number;
      totalCompletedRequests: number;
      totalRequests: number;
      errors: number;
      timeouts: number;
      mismatches: number;
      non2xx: number;
      statusCodeStats: Record<string, { count: number }>;
    }

    interface Instance extends PromiseLike<Result> {
      stop(): void;
      /** `responseTime` in milliseconds, fractional. */
      on(
        event: 'response',
        listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void,
      ): this;
    }
  }

  export = autocannon;
}
