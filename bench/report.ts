import type { BcryptLimit } from './bcrypt-limit';
import type { LoadResult } from './load-spec';

export interface ScenarioRow {
  name: string;
  app: LoadResult;
  /** The bare node:http server doing the same work; absent where there is none (upload). */
  baseline?: LoadResult;
}

/** One answer of a polling install, full and revalidated (bench/polling.ts). */
export interface PollingRow {
  name: string;
  full: LoadResult;
  polled: LoadResult;
}

export interface PollingReport {
  rows: PollingRow[];
}

export interface Aims {
  getRatioMin: number;
  loginFractionMin: number;
  p99GrowthMax: number;
}

// Issue 33's aims.
export const AIMS: Aims = { getRatioMin: 0.8, loginFractionMin: 0.9, p99GrowthMax: 1.5 };

export interface BenchReport {
  startedAt: string;
  machine: { cpu: string; cores: number; node: string; loadAverage: number[] };
  database: string;
  settings: { bcryptCost: number; duration: number; connections: number; loginsBesideRate: number };
  bcrypt: BcryptLimit;
  rows: {
    sessions: ScenarioRow;
    catalogue: ScenarioRow;
    login: ScenarioRow;
    upload: ScenarioRow;
    sessionsUnderLogins: ScenarioRow;
  };
  /** The logins that ran beside the last GET scenario, app then baseline. */
  loginsBeside: { app: LoadResult; baseline?: LoadResult };
  /** A framework install polling with If-None-Match (bench/polling.ts); absent when not run. */
  polling?: PollingReport;
  aims: {
    sessionsRatio: number;
    catalogueRatio: number;
    loginFractionOfLimit: number;
    p99UnderLoginsOverIdle: number;
    baselineP99UnderLoginsOverIdle: number;
  };
}

const fixed = (value: number, digits: number): string =>
  Number.isFinite(value) ? value.toFixed(digits) : '-';

function answers(result: LoadResult, expected: string): string {
  const parts = Object.entries(result.statuses).map(([status, count]) => `${status}x${count}`);
  const text = parts.length > 0 ? parts.join(' ') : 'none';
  return result.failures > 0 ? `${text} (${result.failures} FAILED, want ${expected})` : text;
}

export function table(header: string[], body: string[][]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...body.map((cells) => cells[column].length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) =>
        column === 0 || column === cells.length - 1
          ? cell.padEnd(widths[column])
          : cell.padStart(widths[column]),
      )
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...body.map(line)].join('\n');
}

const cpu = (result: LoadResult | undefined): string =>
  result?.cpuMsPerRequest == null ? '-' : fixed(result.cpuMsPerRequest * 1000, 0);

export function scenarioTable(
  report: BenchReport,
  expected: Record<keyof BenchReport['rows'], string>,
): string {
  const header = [
    'scenario',
    'req/s',
    'p50 ms',
    'p99 ms',
    'baseline req/s',
    'baseline p99 ms',
    'ratio',
    'CPU us/req',
    'baseline CPU us/req',
    'other procs CPU %',
    'answers',
  ];
  const body = (Object.keys(report.rows) as Array<keyof BenchReport['rows']>).map((key) => {
    const { name, app, baseline } = report.rows[key];
    return [
      name,
      fixed(app.requestsPerSecond, 1),
      fixed(app.p50, 2),
      fixed(app.p99, 2),
      baseline ? fixed(baseline.requestsPerSecond, 1) : '-',
      baseline ? fixed(baseline.p99, 2) : '-',
      baseline ? fixed(app.requestsPerSecond / baseline.requestsPerSecond, 2) : '-',
      cpu(app),
      cpu(baseline),
      fixed(app.otherLoad * 100, 0) + (baseline ? ` / ${fixed(baseline.otherLoad * 100, 0)}` : ''),
      answers(app, expected[key]) +
        (baseline && baseline.failures > 0 ? `; baseline ${answers(baseline, expected[key])}` : ''),
    ];
  });
  return table(header, body);
}

const verdict = (met: boolean): string => (met ? 'met' : 'NOT met');

export function summaryLines(report: BenchReport): string[] {
  const { bcrypt, rows, aims, loginsBeside } = report;
  return [
    `bcrypt (${bcrypt.implementation}, cost ${bcrypt.cost}): one compare ${fixed(bcrypt.compareMs, 1)} ms (median of ${bcrypt.runs}); ` +
      `limit = ${bcrypt.cores} cores / ${fixed(bcrypt.compareMs / 1000, 3)} s = ${fixed(bcrypt.loginsPerSecond, 2)} logins/s; ` +
      `login ${fixed(rows.login.app.requestsPerSecond, 2)} req/s = ${fixed(aims.loginFractionOfLimit * 100, 0)}% of the limit ` +
      `(aim >= ${AIMS.loginFractionMin * 100}%: ${verdict(aims.loginFractionOfLimit >= AIMS.loginFractionMin)})` +
      (rows.login.baseline
        ? `; bare baseline login ${fixed(rows.login.baseline.requestsPerSecond, 2)} req/s = ` +
          `${fixed((rows.login.baseline.requestsPerSecond / bcrypt.loginsPerSecond) * 100, 0)}%`
        : ''),
    `  with all ${bcrypt.cores} cores hashing at once they give ${fixed(bcrypt.parallelPerSecond, 2)} compares/s: ` +
      `login = ${fixed((rows.login.app.requestsPerSecond / bcrypt.parallelPerSecond) * 100, 0)}% of that`,
    `  bcryptjs at the same cost: one compare ${fixed(bcrypt.bcryptjs.compareMs, 1)} ms, ` +
      `${fixed(bcrypt.bcryptjs.parallelPerSecond, 2)} compares/s on all cores ` +
      `(${bcrypt.implementation}: ${fixed(bcrypt.parallelPerSecond / bcrypt.bcryptjs.parallelPerSecond, 2)}x as many)`,
    `GET p99 under logins / idle p99: ${fixed(rows.sessionsUnderLogins.app.p99, 2)} / ${fixed(rows.sessions.app.p99, 2)} ms = ` +
      `${fixed(aims.p99UnderLoginsOverIdle, 2)} (aim <= ${AIMS.p99GrowthMax}: ${verdict(aims.p99UnderLoginsOverIdle <= AIMS.p99GrowthMax)}); ` +
      `bare baseline: ${fixed(rows.sessionsUnderLogins.baseline!.p99, 2)} / ${fixed(rows.sessions.baseline!.p99, 2)} ms = ` +
      `${fixed(aims.baselineP99UnderLoginsOverIdle, 2)}`,
    `  logins beside it: offered ${report.settings.loginsBesideRate}/s, answered ${fixed(loginsBeside.app.requestsPerSecond, 2)}/s ` +
      `(p50 ${fixed(loginsBeside.app.p50, 0)} ms, ${answers(loginsBeside.app, '200')})` +
      (loginsBeside.baseline
        ? `; baseline answered ${fixed(loginsBeside.baseline.requestsPerSecond, 2)}/s (p50 ${fixed(loginsBeside.baseline.p50, 0)} ms)`
        : ''),
    `GET routes vs bare baseline (aim >= ${AIMS.getRatioMin * 100}%): sessions ${fixed(aims.sessionsRatio * 100, 0)}% ` +
      `(${verdict(aims.sessionsRatio >= AIMS.getRatioMin)}), catalogue ${fixed(aims.catalogueRatio * 100, 0)}% ` +
      `(${verdict(aims.catalogueRatio >= AIMS.getRatioMin)})`,
  ];
}
