import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { loadConfig } from '../src/config/app-config';
import { startApp } from './app-server';
import { table } from './report';

/** What a slow SMTP server (a real one over the internet) costs per mail. */
const SMTP_DELAY_MS = 100;
const WARMUP = 20;
const ROUNDS = 200;

export interface TimingFigures {
  known: { p50: number; p95: number };
  unknown: { p50: number; p95: number };
}

/**
 * `generate/confirm_email` for an address with an account and one without, in alternation, one
 * request at a time, against a real app whose SMTP server takes 100 ms per mail: the response
 * times must not tell the two apart.
 */
export async function measureConfirmTiming(): Promise<TimingFigures> {
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData: (stream, _session, callback) => {
      stream.resume();
      stream.on('end', () => setTimeout(callback, SMTP_DELAY_MS));
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const workDir = mkdtempSync(join(tmpdir(), 'svc-bench-timing-'));
  const config = loadConfig(
    {
      DATABASE_URL: `sqlite:${join(workDir, 'svc.sqlite')}`,
      JWT_SECRET: 'bench-timing-secret-0123456789abcdefghij',
      BCRYPT_COST: '4',
      RATE_LIMIT: 'off',
      LOG_LEVEL: 'silent',
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String((smtp.server.address() as AddressInfo).port),
      COMMUNITY_PLUGIN_DIR: join(workDir, 'community-plugins'),
    },
    workDir,
  );
  const app = await startApp(config);
  await app.ready;
  try {
    const post = async (path: string, body: object): Promise<number> => {
      const started = performance.now();
      const response = await fetch(app.origin + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await response.text();
      if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
      return performance.now() - started;
    };
    const password = 'Timing!Passw0rd';
    await post('/api/v1/register/', {
      username: 'timing',
      email: 'timing@example.com',
      password,
      confirm_password: password,
    });
    const times = { known: [] as number[], unknown: [] as number[] };
    for (let round = 0; round < WARMUP + ROUNDS; round += 1) {
      const known = await post('/api/v1/generate/confirm_email/', { email: 'timing@example.com' });
      const unknown = await post('/api/v1/generate/confirm_email/', { email: `nobody${round}@example.com` });
      if (round >= WARMUP) {
        times.known.push(known);
        times.unknown.push(unknown);
      }
    }
    return { known: percentiles(times.known), unknown: percentiles(times.unknown) };
  } finally {
    await app.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
    rmSync(workDir, { recursive: true, force: true });
  }
}

function percentiles(values: number[]): { p50: number; p95: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (fraction: number) => sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
  return { p50: at(0.5), p95: at(0.95) };
}

export function formatTiming(figures: TimingFigures): string {
  const row = (name: string, { p50, p95 }: { p50: number; p95: number }) => [
    name,
    p50.toFixed(2),
    p95.toFixed(2),
  ];
  return table(
    ['POST /api/v1/generate/confirm_email/ (SMTP 100 ms per mail)', 'p50 ms', 'p95 ms'],
    [row('address with an account', figures.known), row('address without one', figures.unknown)],
  );
}
