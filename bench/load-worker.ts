/**
 * Runs autocannon in a child process, so the load generator shares neither the event loop
 * nor the CPU accounting of the servers it measures. Started by load.ts, which sends one
 * LoadJob and gets the results back over IPC.
 */
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import type { LoadJob, LoadSpec, RawLoad, UploadBody } from './load-spec';

const BOUNDARY = `----svcbench${randomBytes(8).toString('hex')}`;

function part(name: string, value: string): string {
  return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
}

/** Across the runs of this process (warm-up, then measured); with the pid, no name comes twice. */
let uploadCounter = 0;

/** The upload body around the name, built once; only the name changes between requests. */
function uploadRequest(upload: UploadBody): autocannon.Request {
  const head = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="name"\r\n\r\n`);
  const tail = Buffer.from(
    '\r\n' +
      part('description', 'Benchmark upload') +
      part('group', 'web') +
      part('type', 'passive') +
      part('author', 'svc-bench') +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="plugin_file"; filename="bench_upload.py"\r\n` +
      `Content-Type: text/x-python\r\n\r\n${upload.source}\r\n--${BOUNDARY}--\r\n`,
  );
  return {
    setupRequest: (request) => {
      uploadCounter += 1;
      const name = Buffer.from(`${upload.namePrefix}${process.pid}-${uploadCounter}`);
      return { ...request, body: Buffer.concat([head, name, tail]) };
    },
  };
}

function options(spec: LoadSpec, duration: number): autocannon.Options {
  const headers = { ...spec.headers };
  if (spec.upload) headers['content-type'] = `multipart/form-data; boundary=${BOUNDARY}`;
  return {
    url: spec.origin + spec.path,
    title: spec.title,
    method: spec.method,
    headers,
    body: spec.body,
    requests: spec.upload ? [uploadRequest(spec.upload)] : undefined,
    connections: spec.connections,
    duration,
    overallRate: spec.overallRate,
    timeout: 30,
    verifyBody: (body) => body.includes(spec.expectBodyIncludes),
  };
}

/**
 * autocannon's latency histogram keeps whole milliseconds, too coarse for answers that take
 * a few; its response event carries the exact time, kept here for the answers with the
 * expected status.
 */
async function measured(spec: LoadSpec, duration: number): Promise<RawLoad> {
  const latencies: number[] = [];
  const instance = autocannon(options(spec, duration));
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode === spec.expectStatus) latencies.push(responseTime);
  });
  const result = await instance;
  const statuses: Record<string, number> = {};
  let total = 0;
  for (const [status, { count }] of Object.entries(result.statusCodeStats)) {
    statuses[status] = count;
    total += count;
  }
  const unexpected = total - (statuses[String(spec.expectStatus)] ?? 0);
  return {
    title: spec.title,
    duration: result.duration,
    statuses,
    // A wrong status usually comes with a wrong body too: count such an answer once.
    failures: Math.max(unexpected, result.mismatches) + result.errors,
    latencies,
  };
}

const delay = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

let measuringFrom = process.cpuUsage();

async function main(job: LoadJob): Promise<RawLoad[]> {
  if (job.warmup > 0) await autocannon(options(job.specs[0], job.warmup));
  process.send!({ measuring: true });
  measuringFrom = process.cpuUsage();
  return Promise.all(
    job.specs.map(async (spec) => {
      if (spec.startDelay) await delay(spec.startDelay);
      return measured(spec, spec.duration);
    }),
  );
}

process.once('message', (job: LoadJob) => {
  main(job).then(
    (results) => {
      const cpu = process.cpuUsage(measuringFrom);
      process.send!({ ok: true, results, generatorCpuMs: (cpu.user + cpu.system) / 1000 });
    },
    (error: unknown) => process.send!({ ok: false, message: String(error) }),
  );
});
