import { fork } from 'node:child_process';
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { LoadJob, LoadResult, RawLoad } from './load-spec';

/** What the machine's CPU did while a job's measured runs went on. */
export interface Usage {
  /**
   * CPU time of this process (the servers, their bcrypt workers, GC) while the measured
   * runs went on (not the warm-up), milliseconds; the load generator is another process.
   */
  serverCpuMs: number;
  /**
   * CPU the rest of the machine used meanwhile (neither the servers nor the load generator),
   * milliseconds, and what all cores could have given in that time: on a shared machine this
   * says how far to trust the figures.
   */
  otherCpuMs: number;
  capacityMs: number;
}

export interface MeasuredLoad extends Usage {
  runs: RawLoad[];
}

export const NO_USAGE: Usage = { serverCpuMs: 0, otherCpuMs: 0, capacityMs: 0 };

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    serverCpuMs: a.serverCpuMs + b.serverCpuMs,
    otherCpuMs: a.otherCpuMs + b.otherCpuMs,
    capacityMs: a.capacityMs + b.capacityMs,
  };
}

type Reply =
  | { measuring: true }
  | { ok: true; results: RawLoad[]; generatorCpuMs: number }
  | { ok: false; message: string };

/** Busy time of all cores so far, milliseconds (os.cpus() counts since boot). */
function machineBusyMs(): number {
  return cpus().reduce((sum, { times }) => sum + times.user + times.nice + times.sys + times.irq, 0);
}

/** Runs a LoadJob in a child process: the servers keep this process to themselves. */
export function runLoad(job: LoadJob): Promise<MeasuredLoad> {
  return new Promise((resolve, reject) => {
    const child = fork(join(__dirname, 'load-worker.ts'), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let settled = false;
    let start = { cpu: process.cpuUsage(), busy: machineBusyMs(), time: performance.now() };
    child.once('spawn', () => child.send(job));
    child.on('message', (reply: Reply) => {
      if ('measuring' in reply) {
        start = { cpu: process.cpuUsage(), busy: machineBusyMs(), time: performance.now() };
        return;
      }
      settled = true;
      const cpu = process.cpuUsage(start.cpu);
      const busyMs = machineBusyMs() - start.busy;
      const capacityMs = (performance.now() - start.time) * cpus().length;
      child.kill();
      if (!reply.ok) return reject(new Error(`load generator: ${reply.message}`));
      const serverCpuMs = (cpu.user + cpu.system) / 1000;
      resolve({
        runs: reply.results,
        serverCpuMs,
        otherCpuMs: Math.max(0, busyMs - serverCpuMs - reply.generatorCpuMs),
        capacityMs,
      });
    });
    child.once('error', (error) => {
      settled = true;
      reject(error);
    });
    child.once('exit', (code) => {
      if (!settled) reject(new Error(`load generator exited with code ${code}`));
    });
  });
}

function percentile(sorted: number[], fraction: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
}

/**
 * One figure from several runs of the same load (the rounds of an interleaved comparison):
 * answers and durations add up, latencies are pooled. CPU per answer only where these runs
 * were the server's only load (`perRequestCpu`).
 */
export function summarize(runs: RawLoad[], usage: Usage, perRequestCpu = true): LoadResult {
  const statuses: Record<string, number> = {};
  let total = 0;
  for (const run of runs) {
    for (const [status, count] of Object.entries(run.statuses)) {
      statuses[status] = (statuses[status] ?? 0) + count;
      total += count;
    }
  }
  const duration = runs.reduce((sum, run) => sum + run.duration, 0);
  const latencies = runs.flatMap((run) => run.latencies).sort((a, b) => a - b);
  return {
    title: runs[0].title,
    requestsPerSecond: total / duration,
    p50: percentile(latencies, 0.5),
    p90: percentile(latencies, 0.9),
    p99: percentile(latencies, 0.99),
    max: latencies[latencies.length - 1] ?? NaN,
    total,
    duration,
    statuses,
    failures: runs.reduce((sum, run) => sum + run.failures, 0),
    cpuMsPerRequest: perRequestCpu && total > 0 ? usage.serverCpuMs / total : null,
    otherLoad: usage.capacityMs > 0 ? usage.otherCpuMs / usage.capacityMs : 0,
  };
}
