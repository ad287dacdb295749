/**
 * Issue 44: a framework install that polls. Each figure is the app alone (no baseline does
 * revalidation): a full answer of a catalogue page and of the manifest against the same request
 * with `If-None-Match` naming the current ETag, answered 304 from the version alone (no plugin
 * row read, no signature made), each alone and as an install polls (one page and the manifest,
 * one after the other), in alternating rounds. The aim: polling at least 5x the rate of full answers.
 */
import { addUsage, NO_USAGE, runLoad, summarize } from './load';
import type { LoadResult, LoadSpec, RawLoad } from './load-spec';
import { table } from './report';
import type { PollingReport, PollingRow } from './report';

export const POLLING_AIM = 5;
/** Rounds of full answers and of polls, in turn, each a third of the duration. */
const ROUNDS = 3;

const PATHS = [
  ['GET /api/v1/community-plugins/ (200 approved, limit 50)', '/api/v1/community-plugins/'],
  ['GET /api/v1/community-plugins/manifest/ (200 listed)', '/api/v1/community-plugins/manifest/'],
] as const;

export async function measurePolling(
  origin: string,
  headers: Record<string, string>,
  options: { connections: number; duration: number; progress: (text: string) => void },
): Promise<PollingReport> {
  const rows: PollingRow[] = [];
  for (const [name, path] of PATHS) {
    const first = await fetch(`${origin}${path}`, { headers });
    const etag = first.headers.get('etag');
    if (first.status !== 200 || etag === null)
      throw new Error(`${path} answered ${first.status} without an ETag`);
    await first.arrayBuffer();
    const spec = (polled: boolean): LoadSpec => ({
      title: polled ? 'polled' : 'full',
      origin,
      method: 'GET',
      path,
      headers: polled ? { ...headers, 'if-none-match': etag } : headers,
      connections: options.connections,
      duration: options.duration,
      expectStatus: polled ? 304 : 200,
      expectBodyIncludes: polled ? '' : '"status":"success"',
    });
    options.progress(`${name}: full answers and polls with If-None-Match, ${ROUNDS} alternating rounds`);
    // Alternating, as the app and the baseline do: a change in the machine's other load falls on
    // both alike. Each warms up in its first round only.
    const runs: RawLoad[][] = [[], []];
    const usage = [NO_USAGE, NO_USAGE];
    for (let round = 0; round < ROUNDS; round++) {
      for (const [index, polled] of [false, true].entries()) {
        const measured = spec(polled);
        const load = await runLoad({
          warmup: round === 0 ? 2 : 0,
          specs: [{ ...measured, duration: measured.duration / ROUNDS }],
        });
        runs[index].push(...load.runs);
        usage[index] = addUsage(usage[index], load);
      }
    }
    rows.push({ name, full: summarize(runs[0], usage[0]), polled: summarize(runs[1], usage[1]) });
  }
  return { rows };
}

export function formatPolling(report: PollingReport): string {
  const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(2) : '-');
  // An install's poll is one of each: its rate is that of the requests one after the other.
  const serial = (results: LoadResult[]) =>
    1 / results.reduce((sum, result) => sum + 1 / result.requestsPerSecond, 0);
  const poll = {
    full: serial(report.rows.map((row) => row.full)),
    polled: serial(report.rows.map((row) => row.polled)),
  };
  const body = report.rows.map((row) => [
    row.name,
    row.full.requestsPerSecond.toFixed(0),
    row.polled.requestsPerSecond.toFixed(0),
    `${(row.polled.requestsPerSecond / row.full.requestsPerSecond).toFixed(1)}x`,
    `${ms(row.full.p99)} / ${ms(row.polled.p99)}`,
    `${(row.full.otherLoad * 100).toFixed(0)} / ${(row.polled.otherLoad * 100).toFixed(0)}`,
    `${row.full.failures + row.polled.failures}`,
  ]);
  body.push([
    "an install's poll: the page, then the manifest",
    poll.full.toFixed(0),
    poll.polled.toFixed(0),
    `${(poll.polled / poll.full).toFixed(1)}x`,
    '',
    '',
    '',
  ]);
  return table(
    [
      'polling install',
      'full req/s',
      '304 req/s',
      `ratio (aim >= ${POLLING_AIM}x)`,
      'p99 ms full / 304',
      'other procs CPU %',
      'failures',
    ],
    body,
  );
}
