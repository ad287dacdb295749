import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** Above this share of its time spent working, the event loop counts as busy. */
const BUSY_LOOP = 0.5;
/** The shortest stretch of time over which the event loop's share is measured. */
export const LOAD_SAMPLE_MS = 100;

/**
 * Whether the event loop has been busy lately: its utilisation since the last sample, taken at
 * most every LOAD_SAMPLE_MS (at least one sample's worth of time, longer when nothing asked).
 */
export function eventLoopLoad(): () => boolean {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  let lastAt = performance.now();
  let busy = false;
  return () => {
    const now = performance.now();
    if (now - lastAt >= LOAD_SAMPLE_MS) {
      const current = performance.eventLoopUtilization();
      busy = performance.eventLoopUtilization(current, last).utilization > BUSY_LOOP;
      [last, lastAt] = [current, now];
    }
    return busy;
  };
}
