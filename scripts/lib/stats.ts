/** Nearest-rank percentile of unsorted samples; NaN when there are none. */
export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1];
}

export const ms = (value: number): string => (Number.isNaN(value) ? '-' : `${value.toFixed(1)}`);

/** `{200: 3, 503: 1}` as `200×3 503×1`; status 0 stands for "no response". */
export function histogram(statuses: number[]): string {
  const counts = new Map<number, number>();
  for (const status of statuses) counts.set(status, (counts.get(status) ?? 0) + 1);
  return [...counts.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, count]) => `${status === 0 ? 'none' : status}×${count}`)
    .join(' ');
}

/** A plain text table, columns padded to their widest cell. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((cell, column) =>
    Math.max(cell.length, ...rows.map((row) => row[column].length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

export interface Sample {
  route: string;
  status: number;
  ms: number;
}

/** Per route and overall: count, statuses, p50/p99/max in milliseconds. */
export function latencyTable(samples: Sample[]): string {
  const routes = [...new Set(samples.map((sample) => sample.route))].sort();
  const row = (label: string, subset: Sample[]) => {
    const times = subset.map((sample) => sample.ms);
    return [
      label,
      String(subset.length),
      histogram(subset.map((sample) => sample.status)),
      ms(percentile(times, 50)),
      ms(percentile(times, 99)),
      ms(times.length ? Math.max(...times) : Number.NaN),
    ];
  };
  return table(
    ['route', 'count', 'statuses', 'p50 ms', 'p99 ms', 'max ms'],
    [
      ...routes.map((route) =>
        row(
          route,
          samples.filter((sample) => sample.route === route),
        ),
      ),
      row('ALL', samples),
    ],
  );
}
