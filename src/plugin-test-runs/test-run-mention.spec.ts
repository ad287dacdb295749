import type { PluginTestRun } from './plugin-test-run.entity';
import { summarise, summaryOf } from './test-run-mention';

const event = (flagged: boolean) => ({ event: 'open', args: [], flagged });

describe('a report summarised', () => {
  it('counts the flagged events of both lists, and names the limit that ended the run', () => {
    expect(
      summarise({
        events: [event(true), event(false)],
        observed_events: [event(true), event(true)],
        limit: 'wall',
      }),
    ).toEqual({ flaggedEvents: 3, endedByLimit: 'wall' });
  });

  it('counts nothing of a run without a report, or of a report from before observed_events', () => {
    expect(summarise(null)).toEqual({ flaggedEvents: 0, endedByLimit: null });
    expect(summarise({ events: [event(true)] })).toEqual({ flaggedEvents: 1, endedByLimit: null });
  });

  it('reads the stored summary, and the report only of a row stored without one', () => {
    const report = JSON.stringify({ events: [event(true)], observed_events: [], limit: 'cpu' });
    const row = (stored: Partial<PluginTestRun>) =>
      ({ flaggedEvents: null, endedByLimit: null, report, ...stored }) as PluginTestRun;
    expect(summaryOf(row({ flaggedEvents: 7, endedByLimit: 'output' }))).toEqual({
      flaggedEvents: 7,
      endedByLimit: 'output',
    });
    expect(summaryOf(row({}))).toEqual({ flaggedEvents: 1, endedByLimit: 'cpu' });
    expect(summaryOf(row({ report: null }))).toEqual({ flaggedEvents: 0, endedByLimit: null });
  });
});
