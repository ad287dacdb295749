/**
 * What keeping metrics adds, part by part, for `npm run bench:cpu`. Metrics on (METRICS_PORT or
 * METRICS_TOKEN) add exactly three things (src/metrics/metrics.ts): the request hook on every
 * answer, prom-client's process metrics (an event-loop monitor's timer, a GC observer), and
 * the work of each scrape. Whole servers' rounds spread by more than the few per cent these
 * come to on a shared machine (docs/benchmarks.md); each part alone is measured here, in this
 * process, where nothing else runs meanwhile, and the idle cost by the servers themselves.
 */
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { Metrics } from '../src/metrics/metrics';
import { measureRequests } from '../src/metrics/metrics-endpoint';

type Hook = (request: FastifyRequest, reply: FastifyReply, done: () => void) => void;

/** Label sets of a busy app: routes by methods and statuses (each a child of the histogram). */
const ROUTES_SEEN = 20;
const STATUSES_SEEN = [200, 304, 401, 404];

const cpuNs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) * 1000;
};

/**
 * The request hook as the app installs it, and real requests and replies of routes it answered:
 * ROUTES_SEEN / 4 templates by each of STATUSES_SEEN, so its lookups meet several label sets.
 */
async function installedHook(metrics: Metrics) {
  let hook: Hook | undefined;
  measureRequests(
    {
      getHttpAdapter: () => ({
        getInstance: () => ({ addHook: (_name: string, installed: Hook) => (hook = installed) }),
      }),
    } as never,
    metrics,
  );
  const fastify = Fastify({ routerOptions: { ignoreTrailingSlash: true, caseSensitive: false } });
  const answered: Array<[FastifyRequest, FastifyReply]> = [];
  fastify.addHook('onResponse', (request, reply, done) => {
    answered.push([request, reply]);
    done();
  });
  const templates = ROUTES_SEEN / 4;
  for (let route = 0; route < templates; route++)
    fastify.get(`/api/v1/route-${route}/:id`, async (request, reply) =>
      reply.code(Number((request.params as { id: string }).id)).send({ status: 'success', data: [] }),
    );
  for (let route = 0; route < templates; route++)
    for (const status of STATUSES_SEEN)
      await fastify.inject({ method: 'GET', url: `/api/v1/route-${route}/${status}` });
  await fastify.close();
  if (hook === undefined || answered.length !== templates * STATUSES_SEEN.length)
    throw new Error('the request hook was not installed');
  return { hook, answered };
}

/**
 * CPU nanoseconds one answer's hook takes: rounds of `calls` calls of it, each against the same
 * number of calls of a hook that does nothing, on the same requests and replies in turn. A hot
 * loop: a lower figure than the same code costs among a whole answer's (the profile's, in
 * docs/benchmarks.md).
 */
export async function hookNanoseconds(rounds: number, calls: number): Promise<number[]> {
  const { hook, answered } = await installedHook(new Metrics(false));
  const nothing: Hook = (_request, _reply, done) => done();
  const done = () => undefined;
  const time = (each: Hook) => {
    const before = cpuNs();
    for (let call = 0; call < calls; call++) {
      const [request, reply] = answered[call % answered.length];
      each(request, reply, done);
    }
    return (cpuNs() - before) / calls;
  };
  time(hook);
  time(nothing);
  const costs: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const withHook = time(hook);
    costs.push(withHook - time(nothing));
  }
  return costs;
}

/** CPU milliseconds of one scrape of a registry with a busy app's label sets and the process metrics. */
export async function scrapeMilliseconds(scrapes: number): Promise<number> {
  const metrics = new Metrics(true);
  for (let route = 0; route < ROUTES_SEEN; route++)
    for (const method of ['GET', 'POST'])
      for (const status of STATUSES_SEEN)
        metrics.httpRequests.observer({
          route: `/api/v1/route-${route}/:id`,
          method,
          status: String(status),
        })(0.01);
  await metrics.scrape();
  const before = cpuNs();
  for (let scrape = 0; scrape < scrapes; scrape++) await metrics.scrape();
  return (cpuNs() - before) / scrapes / 1e6;
}
