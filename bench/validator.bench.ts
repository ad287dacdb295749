/**
 * Benchmark of the plugin validator through the worker pool the server uses (ValidatorPool: the
 * python3 analyser processes, their JSON round trip and the fair queue): part of `npm run bench`, or alone with
 *   node --expose-gc --import tsx bench/validator.bench.ts
 * (--expose-gc makes the memory columns steadier; it runs without it too.)
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ValidatorPool } from '../src/plugin-validator';
import { WORST_CASES, generateWorstCase } from '../src/plugin-validator/worst-cases';

export interface BenchRow {
  name: string;
  runs: number;
  /** Input size of one run, in bytes. */
  bytes: number;
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
  /** Growth over all runs, after a GC when available: shows leaks, not peak use. */
  heapDeltaKb: number;
  rssDeltaKb: number;
}

const TARGET_SMALL_BYTES = 50 * 1024;
const TARGET_LARGE_BYTES = 200 * 1024;
/** The upload limit: the analyser's worst cases are timed at the largest file it is given. */
const TARGET_WORST_BYTES = 256 * 1024;

export async function runValidatorBench(): Promise<BenchRow[]> {
  const pool = new ValidatorPool();
  try {
    return await benchPool(pool);
  } finally {
    await pool.onApplicationShutdown();
  }
}

async function benchPool(pool: ValidatorPool): Promise<BenchRow[]> {
  const validate = (source: Buffer) => pool.validate(source, 'bench');
  const corpus = readBenignCorpus();
  const plugin50k = Buffer.from(generatePlugin(TARGET_SMALL_BYTES), 'utf8');
  const plugin200k = Buffer.from(generatePlugin(TARGET_LARGE_BYTES), 'utf8');
  for (const source of [plugin50k, plugin200k]) {
    const result = await validate(source);
    if (!result.ok) throw new Error(`generated plugin rejected: ${JSON.stringify(result.violations[0])}`);
  }

  const rows: BenchRow[] = [];
  const corpusBytes = corpus.reduce((sum, source) => sum + source.length, 0);
  rows.push(
    await measure(`benign corpus (${corpus.length} files)`, 10, corpusBytes, async () => {
      for (const source of corpus) await validate(source);
    }),
  );
  rows.push(await measure('generated ~50 KB plugin', 200, plugin50k.length, () => validate(plugin50k)));
  rows.push(await measure('generated ~200 KB plugin', 30, plugin200k.length, () => validate(plugin200k)));
  for (const kind of WORST_CASES) {
    const source = Buffer.from(generateWorstCase(kind, TARGET_WORST_BYTES), 'utf8');
    rows.push(await measure(`worst case: ${kind} (~256 KB)`, 5, source.length, () => validate(source)));
  }
  return rows;
}

async function measure(
  name: string,
  runs: number,
  bytes: number,
  run: () => Promise<unknown>,
): Promise<BenchRow> {
  for (let warmup = 0; warmup < Math.min(20, runs); warmup++) await run();
  collectGarbage();
  const before = process.memoryUsage();
  const durations: number[] = [];
  for (let index = 0; index < runs; index++) {
    const start = performance.now();
    await run();
    durations.push(performance.now() - start);
  }
  collectGarbage();
  const after = process.memoryUsage();
  durations.sort((a, b) => a - b);
  return {
    name,
    runs,
    bytes,
    meanMs: durations.reduce((sum, value) => sum + value, 0) / runs,
    p50Ms: percentile(durations, 0.5),
    p99Ms: percentile(durations, 0.99),
    heapDeltaKb: (after.heapUsed - before.heapUsed) / 1024,
    rssDeltaKb: (after.rss - before.rss) / 1024,
  };
}

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
}

function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** The benign corpus of the validator's tests, found from bench/ upwards. */
function readBenignCorpus(): Buffer[] {
  let dir = __dirname;
  for (let depth = 0; depth < 4; depth++) {
    const candidate = path.join(dir, 'test/fixtures/plugins/benign');
    if (existsSync(candidate)) {
      return readdirSync(candidate)
        .filter((name) => name.endsWith('.py'))
        .map((name) => readFileSync(path.join(candidate, name)));
    }
    dir = path.dirname(dir);
  }
  throw new Error('test/fixtures/plugins/benign not found above ' + __dirname);
}

/** A realistic plugin inside the profile, of about `targetBytes`: classes, comprehensions, f-strings, regexes. */
export function generatePlugin(targetBytes: number): string {
  const parts = [
    'import json\nimport re\nfrom collections import Counter\nfrom dataclasses import dataclass\n\n',
    'DESCRIPTION = "Generated benchmark plugin"\n',
  ];
  let size = parts.join('').length;
  for (let index = 0; size < targetBytes; index++) {
    const part = `

@dataclass
class Finding${index}:
    host: str
    port: int
    severity: int = ${index % 10}

    def __str__(self) -> str:
        return f"{self.host}:{self.port:>5} severity={self.severity}"


class Collector${index}:
    def __init__(self, pattern: str = r"(?P<host>[\\w.-]+):(?P<port>\\d+)") -> None:
        self.pattern = re.compile(pattern)
        self.findings: list = []

    def feed(self, lines):
        for line in lines:
            match = self.pattern.search(line)
            if match and int(match.group("port")) < 65536:
                self.findings.append(Finding${index}(match.group("host"), int(match.group("port"))))
        return self

    def summary(self) -> dict:
        ports = Counter(finding.port for finding in self.findings)
        worst = sorted((str(f) for f in self.findings), key=lambda text: (-len(text), text))[:3]
        return {"ports": dict(ports), "worst": worst, "id": ${index}}


def step_${index}(info):
    lines = info.get("lines", [])
    collector = Collector${index}()
    collector.feed(lines)
    return json.dumps({key: value for key, value in collector.summary().items() if value})
`;
    parts.push(part);
    size += part.length;
  }
  parts.push('\n\ndef run(PluginInfo):\n    return [step_0(PluginInfo)]\n');
  return parts.join('');
}

export function formatBenchTable(rows: BenchRow[]): string {
  const header = ['case', 'runs', 'KB/run', 'mean ms', 'p50 ms', 'p99 ms', 'heap Δ KB', 'RSS Δ KB'];
  const body = rows.map((row) => [
    row.name,
    String(row.runs),
    (row.bytes / 1024).toFixed(1),
    row.meanMs.toFixed(2),
    row.p50Ms.toFixed(2),
    row.p99Ms.toFixed(2),
    row.heapDeltaKb.toFixed(0),
    row.rssDeltaKb.toFixed(0),
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...body.map((cells) => cells[column].length)),
  );
  const line = (cells: string[]): string =>
    cells
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])))
      .join('  ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...body.map(line)].join('\n');
}

if (require.main === module) {
  runValidatorBench()
    .then((rows) => console.log(formatBenchTable(rows)))
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
}
