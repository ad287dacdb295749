/** The limits of one run in the jail (settings PLUGIN_TEST_RUN_*; docs/settings.md has the defaults). */
export interface JailLimits {
  cpuSeconds: number;
  /** Enforced from the parent: the jail's processes are killed. */
  wallSeconds: number;
  addressSpaceBytes: number;
  /** The largest file the plugin may write; also the size of each tmpfs (the working directory and /tmp). */
  fileSizeBytes: number;
  /** Processes of the jail's user, the runner included. */
  processes: number;
}

export interface JailSettings {
  bwrapPath: string;
  /** The interpreter run inside: it must live under /usr, the only host directory bound. */
  pythonPath: string;
  limits: JailLimits;
  /** Events recorded before only flagged ones are (and those up to as many again). */
  maxEvents: number;
  /** Bytes kept of stdout, and of stderr. */
  maxOutputBytes: number;
}

/** Which limit ended a run. */
export type TestRunLimit = 'cpu' | 'wall' | 'address-space' | 'file-size' | 'processes';

export type TestRunStatus = 'queued' | 'running' | 'done' | 'timed-out' | 'failed';

/** One audit event: CPython's own event name (or `runner.*` for what the runner itself noticed). */
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
  events: TestRunEvent[];
  /** Events past the bound, not recorded. */
  events_dropped: number;
}
