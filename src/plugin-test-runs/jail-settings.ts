import type { PluginTestRunConfig } from '../config/app-config';
import type { JailSettings } from '../plugin-jail';

/** Events kept before only flagged ones are, and bytes kept of stdout and of stderr: the report's bounds. */
const MAX_EVENTS = 2000;
const MAX_OUTPUT_BYTES = 64 * 1024;

/** The jail as the settings describe it (the API's and svc-admin's alike). */
export function jailSettings(run: PluginTestRunConfig): JailSettings {
  return {
    bwrapPath: run.bwrapPath,
    stracePath: run.stracePath,
    pythonPath: run.pythonPath,
    limits: {
      cpuSeconds: run.cpuSeconds,
      wallSeconds: run.wallSeconds,
      addressSpaceBytes: run.addressSpaceBytes,
      fileSizeBytes: run.fileSizeBytes,
      processes: run.processes,
      cpuPriority: run.cpuPriority,
    },
    maxEvents: MAX_EVENTS,
    maxOutputBytes: MAX_OUTPUT_BYTES,
  };
}
