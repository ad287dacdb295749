import { Histogram, Registry } from 'prom-client';
import { RequestHistogram } from './request-histogram';

const BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const NAME = 'svc_http_request_duration_seconds';
const HELP = 'Answered HTTP requests';

/** The same observations into prom-client's Histogram and into ours, each on a registry of its own. */
function both(observations: Array<[Record<string, string>, number]>) {
  const theirs = new Registry();
  const reference = new Histogram({
    name: NAME,
    help: HELP,
    labelNames: ['route', 'method', 'status'],
    buckets: BOUNDS,
    registers: [theirs],
  });
  const ours = new Registry();
  const histogram = new RequestHistogram(NAME, HELP, BOUNDS);
  ours.registerMetric(histogram as never);
  const observers = new Map<string, (seconds: number) => void>();
  for (const [labels, seconds] of observations) {
    reference.labels(labels).observe(seconds);
    const key = JSON.stringify(labels);
    if (!observers.has(key)) observers.set(key, histogram.observer(labels));
    observers.get(key)!(seconds);
  }
  return { theirs, ours };
}

describe('RequestHistogram', () => {
  const sessions = { route: '/api/v1/sessions/', method: 'GET', status: '200' };
  const missing = { route: 'unmatched', method: 'POST', status: '404' };

  it('exposes the same text as prom-client for values on, between, below and above the bounds', async () => {
    const values = [0, 0.005, 0.0050001, 0.01, 0.3, 1, 10, 10.5, 1e6, 0.0001, 2.5, 4.999];
    const { theirs, ours } = both(
      values.map(
        (seconds, index) => [index % 3 ? sessions : missing, seconds] as [Record<string, string>, number],
      ),
    );
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it('matches prom-client over many random observations and label sets, as text and as JSON', async () => {
    let seed = 7;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const labelSets = [
      sessions,
      missing,
      { route: '/api/v1/community-plugins/', method: 'GET', status: '304' },
    ];
    const observations = Array.from(
      { length: 5000 },
      () => [labelSets[Math.floor(random() * 3)], random() ** 3 * 12] as [Record<string, string>, number],
    );
    const { theirs, ours } = both(observations);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
  });

  it('shows nothing before the first observer, and zeros after a reset', async () => {
    const { theirs, ours } = both([]);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    const registry = new Registry();
    const histogram = new RequestHistogram(NAME, HELP, BOUNDS);
    registry.registerMetric(histogram as never);
    const observe = histogram.observer(sessions);
    observe(0.2);
    registry.resetMetrics();
    expect(await registry.metrics()).toContain(
      `${NAME}_count{route="/api/v1/sessions/",method="GET",status="200"} 0`,
    );
    observe(0.2);
    expect(await registry.metrics()).toContain(
      `${NAME}_count{route="/api/v1/sessions/",method="GET",status="200"} 1`,
    );
  });
});
