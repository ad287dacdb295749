import pino from 'pino';
import type { Logger as Pino } from 'pino';
import type { LogFormat, LogLevel } from '../config/app-config';
import { CENSOR, REDACT_PATHS } from './redaction';

const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};
/** Shown on the line itself; anything else follows as `key=value`. */
const SHOWN = new Set([
  'level',
  'time',
  'pid',
  'hostname',
  'msg',
  'context',
  'req',
  'res',
  'responseTime',
  'err',
]);

/**
 * One JSON line from pino as a person reads it: `12:34:56.789 INFO  [Context] message key=value`;
 * a request line as `GET /api/v1/x 200 3 ms (req-1)`; an error's stack below it. Secrets are
 * already redacted in the JSON this reads.
 */
export function prettyLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = new Date(Number(entry.time)).toISOString().slice(11, 23);
  const level = (LEVEL_NAMES[Number(entry.level)] ?? String(entry.level)).padEnd(5);
  const context = typeof entry.context === 'string' ? ` [${entry.context}]` : '';
  let text = typeof entry.msg === 'string' ? entry.msg : '';
  const req = entry.req as { id?: unknown; method?: unknown; url?: unknown } | undefined;
  const res = entry.res as { statusCode?: unknown } | undefined;
  if (req && res) {
    text = `${String(req.method)} ${String(req.url)} ${String(res.statusCode)} ${String(entry.responseTime)} ms (${String(req.id)})`;
  }
  const extra = Object.entries(entry)
    .filter(([key]) => !SHOWN.has(key))
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  const err = entry.err as { stack?: unknown; message?: unknown } | undefined;
  const stack = err ? `\n${String(err.stack ?? err.message)}` : '';
  return `${time} ${level}${context} ${text}${extra.length > 0 ? ` ${extra.join(' ')}` : ''}${stack}\n`;
}

/** pino writing to stdout as JSON lines, or readable lines (LOG_FORMAT=pretty), secrets redacted either way. */
export function createPino(level: LogLevel, format: LogFormat): Pino {
  const options = { level, redact: { paths: REDACT_PATHS, censor: CENSOR } };
  if (format === 'json') return pino(options);
  // Synchronous writes: a development aid, where a log line lost at exit would puzzle more than it costs.
  return pino(options, { write: (line: string) => process.stdout.write(prettyLine(line)) });
}
