import type { TestRunEvent, TestRunLimit, TestRunReport } from '../plugin-jail';
import type { TestRunSummary } from './dto/test-run.dto';
import type { PluginTestRun } from './plugin-test-run.entity';

/** A report as a row keeps it: the jail's report without its status (the row's own), or null for a run that made none. */
export type StoredReport = Omit<TestRunReport, 'status'> | null;

/** What a list shows of a report: the row's flagged_events and ended_by_limit. */
export interface ReportSummary {
  flaggedEvents: number;
  endedByLimit: TestRunLimit | null;
}

/**
 * A row's report, parsed. A report from before `observed_events` lacks them; readers default
 * the missing lists.
 */
export function parseReport(text: string | null): StoredReport {
  return text === null ? null : (JSON.parse(text) as StoredReport);
}

/**
 * How many of a report's events a reviewer must look at: the flagged ones of both lists, what
 * was observed from outside and the plugin's testimony. Written beside the report when it is.
 */
export function summarise(
  report: { events?: TestRunEvent[]; observed_events?: TestRunEvent[]; limit?: TestRunLimit | null } | null,
): ReportSummary {
  const events = [...(report?.observed_events ?? []), ...(report?.events ?? [])];
  return {
    flaggedEvents: events.filter((event) => event.flagged).length,
    endedByLimit: report?.limit ?? null,
  };
}

/** The stored summary; for a row a server without those columns ended, read from its report. */
export function summaryOf(
  run: Pick<PluginTestRun, 'flaggedEvents' | 'endedByLimit' | 'report'>,
): ReportSummary {
  if (run.flaggedEvents !== null) return { flaggedEvents: run.flaggedEvents, endedByLimit: run.endedByLimit };
  return summarise(parseReport(run.report));
}

/** A run as the diff names the version's newest: its id, its status and how many of its events a reviewer must look at. */
export function testRunMention(
  run: TestRunSummary | undefined,
): { id: number; status: string; flagged_events: number } | null {
  return run === undefined ? null : { id: run.id, status: run.status, flagged_events: run.flagged_events };
}

/** A run in a list (a version's runs, the diff's newest of each reviewer): who asked for it, and its summary. */
export function testRunSummary(run: PluginTestRun, requestedByUsername: string): TestRunSummary {
  const summary = summaryOf(run);
  return {
    id: run.id,
    status: run.status,
    flagged_events: summary.flaggedEvents,
    requested_by_user_id: run.requestedByUserId,
    requested_by_username: requestedByUsername,
    created_at: run.createdAt.toISOString(),
    finished_at: run.finishedAt?.toISOString() ?? null,
    limit: summary.endedByLimit,
  };
}
