/** The limits of one run in the jail (settings PLUGIN_TEST_RUN_*; docs/settings.md has the defaults). */
export interface JailLimits {
  cpuSeconds: number;
  /** Enforced from the parent: the jail's processes are killed. */
  wallSeconds: number;
  addressSpaceBytes: number;
  /** The largest file the plugin may write; also the size of each tmpfs (the working directory and /tmp). */
  fileSizeBytes: number;
  /**
   * Tasks of the jail's user, the runner included (RLIMIT_NPROC): its threads, since the
   * process filter allows no second process.
   */
  processes: number;
  /**
   * `idle`: the run gets the CPU only when nothing else wants it (SCHED_IDLE), so test-runs
   * never slow the API; on a busy machine a run can then reach its wall limit before its CPU
   * limit. `normal`: the server's own priority.
   */
  cpuPriority: 'idle' | 'normal';
}

export interface JailSettings {
  bwrapPath: string;
  /** The tracer around the jail: the report's facts are what it sees. */
  stracePath: string;
  /** The interpreter run inside: it must live under /usr, the only host directory bound. */
  pythonPath: string;
  limits: JailLimits;
  /** Events recorded before only flagged ones are (and those up to as many again). */
  maxEvents: number;
  /** Bytes kept of stdout, and of stderr. */
  maxOutputBytes: number;
}

/** Which limit ended a run. */
export type TestRunLimit = 'cpu' | 'wall' | 'address-space' | 'file-size' | 'processes' | 'output';

export type TestRunStatus = 'queued' | 'running' | 'done' | 'timed-out' | 'failed';

/**
 * One event of a report. In `events`, the plugin's own testimony: an audit event of its
 * interpreter, CPython's own name (or `runner.*` for what the runner noticed). In
 * `observed_events`, a fact seen from outside the plugin's processes: `kernel.<system call>` as
 * the tracer saw it, or `server.*` for what the server concluded (`server.testimony-missing`).
 */
export interface TestRunEvent {
  event: string;
  /** The arguments made printable and bounded. */
  args: string[];
  /** True for what a reviewer must look at: writes, connects, spawns, dynamic code, reads outside the working directory, introspection. */
  flagged: boolean;
}

/** What one run in the jail made. */
export interface TestRunReport {
  status: Exclude<TestRunStatus, 'queued' | 'running'>;
  limit: TestRunLimit | null;
  duration_ms: number;
  peak_memory_bytes: number | null;
  stdout: string;
  stderr: string;
  exception: string | null;
  return_value: string | null;
  /** The plugin's own testimony (its interpreter's audit events): context, not proof. */
  events: TestRunEvent[];
  /** Events past the bound, not recorded. */
  events_dropped: number;
  /** What the kernel saw the jailed processes do, observed from outside their reach. */
  observed_events: TestRunEvent[];
  /** Observed events past the bound, not kept. */
  observed_events_dropped: number;
}
