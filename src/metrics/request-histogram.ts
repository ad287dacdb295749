/**
 * The answered requests' histogram, kept here rather than in prom-client's Histogram: every
 * request observes it, and prom-client's observe validates and hashes the labels and allocates
 * on each call (about two thirds of what the metrics cost a GET, by the profile). Here a label
 * set's counts are found once, by the caller, and an observation is a scan of eleven bounds and
 * three additions. The exposition is prom-client's own: the registry formats what `get` and
 * `getForPromString` answer, in the shapes its Histogram answers them
 * (request-histogram.spec.ts compares the two). docs/decisions/metrics.md
 */

type Labels = Record<string, string>;
/** A bucket's `le` is a number, as prom-client's; `+Inf` the one string. */
type SampleLabels = Record<string, string | number>;

interface Series {
  labels: Labels;
  /** Observations per bucket, not cumulative; the last counts those above every bound. */
  counts: number[];
  sum: number;
  count: number;
}

interface Value {
  labels: SampleLabels;
  sharedLabels: Labels;
  value: number;
  metricName: string;
  /** prom-client's buckets carry one (null without exemplars); its sum and count do not. */
  exemplar?: null;
}

export class RequestHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private series: Series[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly upperBounds: readonly number[],
  ) {}

  /** The observer of one label set (to be kept by the caller: each call adds a series). */
  observer(labels: Labels): (seconds: number) => void {
    const series: Series = {
      labels,
      counts: new Array<number>(this.upperBounds.length + 1).fill(0),
      sum: 0,
      count: 0,
    };
    this.series.push(series);
    const bounds = this.upperBounds;
    return (seconds) => {
      let bucket = 0;
      while (bucket < bounds.length && seconds > bounds[bucket]) bucket++;
      series.counts[bucket] += 1;
      series.sum += seconds;
      series.count += 1;
    };
  }

  /** For the registry's text: each sample's `le` in `labels`, the series' own in `sharedLabels`. */
  getForPromString() {
    const values: Value[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const series of this.series) {
      let cumulative = 0;
      this.upperBounds.forEach((bound, index) => {
        cumulative += series.counts[index];
        values.push({
          labels: { le: bound },
          sharedLabels: series.labels,
          value: cumulative,
          metricName: bucketName,
          exemplar: null,
        });
      });
      values.push({
        labels: { le: '+Inf' },
        sharedLabels: series.labels,
        value: series.count,
        metricName: bucketName,
        exemplar: null,
      });
      values.push({
        labels: {},
        sharedLabels: series.labels,
        value: series.sum,
        metricName: `${this.name}_sum`,
      });
      values.push({
        labels: {},
        sharedLabels: series.labels,
        value: series.count,
        metricName: `${this.name}_count`,
      });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** For the registry's JSON: the labels of each sample in one object, as prom-client's. */
  get() {
    const data = this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ labels, sharedLabels, ...rest }) => ({
        ...rest,
        labels: { ...labels, ...sharedLabels },
      })),
    };
  }

  /** The registry's resetMetrics: every count back to zero, the observers handed out included. */
  reset(): void {
    for (const series of this.series) {
      series.counts.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  }
}
