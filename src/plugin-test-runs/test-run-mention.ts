import type { TestRunEvent } from '../plugin-jail';
import type { PluginTestRun } from './plugin-test-run.entity';

/** A run as the diff names it: its id, its status and how many of its events a reviewer must look at. */
export function testRunMention(
  run: PluginTestRun | null,
): { id: number; status: string; flagged_events: number } | null {
  if (run === null) return null;
  const report =
    run.report === null
      ? null
      : (JSON.parse(run.report) as { events?: TestRunEvent[]; observed_events?: TestRunEvent[] } | null);
  const events = [...(report?.observed_events ?? []), ...(report?.events ?? [])];
  return {
    id: run.id,
    status: run.status,
    flagged_events: events.filter((event) => event.flagged).length,
  };
}
