/**
 * The catalogue at scale (issue 22): BENCH_CATALOGUE_PLUGINS approved plugins (100,000 by
 * default) written straight into the database (rows, first versions, search and tag index
 * rows through the app's own indexing code, and a clean re-check verdict under the current
 * rules, as an install in its steady state has) and their files into the plugin directory, then
 * GET /api/v1/community-plugins/ one request at a time: the first page, `q=` (a whole word
 * and part of one), `tag=`, the middle and the last page by `offset`; then the app's start-up time on
 * that database. Medians and 90th percentiles in milliseconds, measured by the client
 * (loopback HTTP included).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../src/config/app-config';
import { indexPlugins, listCode } from '../src/community-plugins/catalogue/index/plugin-search-index';
import { membershipOf, recountLists } from '../src/community-plugins/catalogue/index/catalogue-counts';
import { RULES_VERSION } from '../src/plugin-validator';
import type { IndexedPlugin } from '../src/community-plugins/catalogue/index/plugin-search-index';
import { storedTags } from '../src/community-plugins/shared/user-plugin.entity';
import { identityKey } from '../src/users/identity-key';
import { startApp } from './app-server';
import { seed } from './seed';

export interface CatalogueScaleRow {
  name: string;
  path: string;
  /** `total` of the answer: how many plugins matched. */
  matches: number;
  samples: number;
  median: number;
  p90: number;
}

export interface CatalogueScaleReport {
  plugins: number;
  seedSeconds: number;
  rows: CatalogueScaleRow[];
  /** Milliseconds from creating the app to listening, each start on the seeded database. */
  startups: number[];
  startupMedian: number;
  /** Milliseconds from creating the app to the end of its start-up work (readiness up), each start. */
  readies: number[];
  readyMedian: number;
}

const BATCH = 1000;
const TAG_WORDS = 500;
const DESCRIPTION_WORDS = 2000;

/** Deterministic made-up words: consonant-vowel syllables, so substrings repeat as in prose. */
function word(index: number): string {
  const consonants = 'bcdfghklmnprstvz';
  const vowels = 'aeiou';
  let text = '';
  let value = index + 17;
  for (let syllable = 0; syllable < 3; syllable++) {
    text +=
      consonants[value % consonants.length] + vowels[Math.floor(value / consonants.length) % vowels.length];
    value = Math.floor(value / (consonants.length * vowels.length)) + syllable * 7 + 3;
  }
  return `${text}${index % 10}`;
}

const date = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

/** Approved plugin number `index`, created `createdMs`. */
function benchPlugin(index: number, createdMs = 0): IndexedPlugin & { source: string } {
  const pick = (salt: number, size: number) => (index * 2654435761 + salt * 40503) % size;
  return {
    id: 0,
    list: listCode(membershipOf({ status: 'approved', fileAlteredAt: null })),
    createdMs,
    name: `scale-${word(pick(1, DESCRIPTION_WORDS))}-${index}`,
    description:
      `Scans ${word(pick(2, DESCRIPTION_WORDS))} and ${word(pick(3, DESCRIPTION_WORDS))} targets, ` +
      `reports ${word(pick(4, DESCRIPTION_WORDS))} findings (${index}).`,
    author: `Author ${word(pick(5, 300))}`,
    tags: [...new Set([pick(6, TAG_WORDS), pick(7, TAG_WORDS), pick(8, TAG_WORDS)])].map(
      (tag) => `t-${word(tag)}`,
    ),
    source: `DESCRIPTION = "scale ${index}"\n\n\ndef run(PluginInfo):\n    return []\n`,
  };
}

/** Rows, versions, index rows and files of `count` approved plugins owned by `userId`. */
export async function seedCatalogue(
  dataSource: DataSource,
  pluginDir: string,
  count: number,
  userId: number,
): Promise<void> {
  mkdirSync(pluginDir, { recursive: true });
  const [{ next }] = (await dataSource.query(
    'SELECT COALESCE(MAX(`id`), 0) + 1 AS `next` FROM `user_plugins`',
  )) as Array<{ next: number | string }>;
  const [{ nextVersion }] = (await dataSource.query(
    'SELECT COALESCE(MAX(`id`), 0) + 1 AS `nextVersion` FROM `plugin_versions`',
  )) as Array<{ nextVersion: number | string }>;
  const start = Date.now() - count * 1000;
  for (let from = 0; from < count; from += BATCH) {
    const plugins: Array<IndexedPlugin & { source: string }> = [];
    const rows: unknown[][] = [];
    const versions: unknown[][] = [];
    const rechecks: unknown[][] = [];
    for (let index = from; index < Math.min(count, from + BATCH); index++) {
      const plugin = benchPlugin(index, start + index * 1000);
      plugin.id = Number(next) + index;
      const file = `scale_${index}_${randomBytes(8).toString('hex')}.py`;
      writeFileSync(join(pluginDir, file), plugin.source);
      const sha256 = createHash('sha256').update(plugin.source).digest('hex');
      const created = date(plugin.createdMs);
      rows.push([
        plugin.id,
        plugin.name,
        identityKey(plugin.name),
        plugin.description,
        ['web', 'network', 'auxiliary'][index % 3],
        ['active', 'passive', 'semi_passive', 'external', 'grep'][index % 5],
        plugin.author,
        'approved',
        userId,
        userId,
        created,
        sha256,
        '1.0.0',
        storedTags(plugin.tags),
        file,
        created,
        created,
      ]);
      versions.push([
        Number(nextVersion) + index,
        plugin.id,
        '1.0.0',
        sha256,
        file,
        'approved',
        userId,
        userId,
        created,
        created,
      ]);
      rechecks.push([plugin.id, RULES_VERSION, sha256, '[]', created]);
      plugins.push(plugin);
    }
    await dataSource.transaction(async (manager) => {
      const run = (sql: string, params?: unknown[]) => manager.query(sql, params) as Promise<unknown>;
      await run(
        'INSERT INTO `user_plugins` (`id`, `name`, `name_key`, `description`, `group`, `type`, `author`, `status`, ' +
          '`user_id`, `reviewed_by_user_id`, `reviewed_at`, `sha256`, `version`, `tags`, `file_path`, `created_at`, ' +
          '`updated_at`) VALUES ' +
          rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', '),
        rows.flat(),
      );
      await run(
        'INSERT INTO `plugin_versions` (`id`, `plugin_id`, `version`, `sha256`, `file_path`, `status`, `user_id`, ' +
          '`reviewed_by_user_id`, `reviewed_at`, `created_at`) VALUES ' +
          versions.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', '),
        versions.flat(),
      );
      await run(
        'INSERT INTO `plugin_rechecks` (`plugin_id`, `rules_version`, `sha256`, `findings`, `checked_at`) VALUES ' +
          rechecks.map(() => '(?, ?, ?, ?, ?)').join(', '),
        rechecks.flat(),
      );
      await indexPlugins(run, plugins);
    });
  }
  // Written around the app: its kept catalogue counts are put right, as a start would.
  await dataSource.transaction((manager) =>
    recountLists((sql, params) => manager.query(sql, params) as Promise<unknown>),
  );
}

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
}

async function measurePath(
  origin: string,
  token: string,
  name: string,
  path: string,
  samples: number,
): Promise<CatalogueScaleRow> {
  const request = () => fetch(origin + path, { headers: { authorization: `Bearer ${token}` } });
  const once = async () => {
    const started = performance.now();
    // A kept-alive connection the server closed while seeding ran fails once; a new one is made.
    const response = await request().catch(() => request());
    const body = (await response.json()) as { data?: { total?: number } };
    const elapsed = performance.now() - started;
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
    return { elapsed, total: Number(body.data?.total) };
  };
  for (let warm = 0; warm < 5; warm++) await once();
  const times: number[] = [];
  let matches = 0;
  for (let sample = 0; sample < samples; sample++) {
    const { elapsed, total } = await once();
    times.push(elapsed);
    matches = total;
  }
  times.sort((a, b) => a - b);
  return { name, path, matches, samples, median: percentile(times, 0.5), p90: percentile(times, 0.9) };
}

export async function measureCatalogueScale(
  config: AppConfig,
  options: {
    plugins: number;
    samples: number;
    startups: number;
    bcryptCost: number;
    progress: (text: string) => void;
  },
): Promise<CatalogueScaleReport> {
  const { plugins, samples, progress } = options;
  let app = await startApp(config);
  const rows: CatalogueScaleRow[] = [];
  const seeding = { seconds: 0 };
  try {
    const seeded = await seed(app.origin, app.dataSource, {
      sessions: 0,
      approvedPlugins: 0,
      bcryptCost: options.bcryptCost,
    });
    const [owner] = (await app.dataSource.query('SELECT `id` FROM `users` WHERE `email` = ?', [
      seeded.admin.email,
    ])) as Array<{ id: number | string }>;
    progress(`catalogue at scale: seeding ${plugins} approved plugins directly in the database`);
    const seedStart = performance.now();
    await seedCatalogue(app.dataSource, config.communityPluginDir, plugins, Number(owner.id));
    seeding.seconds = (performance.now() - seedStart) / 1000;
    const sample = benchPlugin(Math.floor(plugins / 2));
    const wholeWord = sample.description.split(' ')[1];
    const partWord = wholeWord.slice(1, 5).toUpperCase();
    const paths: Array<[string, string]> = [
      ['first page', '/api/v1/community-plugins/'],
      [`q= a whole word ("${wholeWord}")`, `/api/v1/community-plugins/?q=${encodeURIComponent(wholeWord)}`],
      [
        `q= part of a word, other case ("${partWord}")`,
        `/api/v1/community-plugins/?q=${encodeURIComponent(partWord)}`,
      ],
      [`tag= ("${sample.tags[0]}")`, `/api/v1/community-plugins/?tag=${encodeURIComponent(sample.tags[0])}`],
      [
        'middle page (offset half the catalogue)',
        `/api/v1/community-plugins/?offset=${Math.floor(plugins / 2)}`,
      ],
      ['last page (deep offset)', `/api/v1/community-plugins/?offset=${Math.max(0, plugins - 50)}`],
    ];
    for (const [name, path] of paths) {
      progress(`catalogue at scale: ${name}`);
      rows.push(await measurePath(app.origin, seeded.reader.token, name, path, samples));
    }
  } finally {
    await app.close();
  }
  const startups: number[] = [];
  const readies: number[] = [];
  for (let start = 0; start < options.startups; start++) {
    progress(`catalogue at scale: start-up ${start + 1} of ${options.startups}`);
    const started = performance.now();
    app = await startApp(config);
    startups.push(performance.now() - started);
    await app.ready;
    readies.push(performance.now() - started);
    await app.close();
  }
  const median = (values: number[]) =>
    percentile(
      [...values].sort((a, b) => a - b),
      0.5,
    );
  return {
    plugins,
    seedSeconds: seeding.seconds,
    rows,
    startups,
    startupMedian: median(startups),
    readies,
    readyMedian: median(readies),
  };
}

export function formatCatalogueScale(report: CatalogueScaleReport): string {
  const lines = [
    `catalogue at ${report.plugins} approved plugins (seeded in ${report.seedSeconds.toFixed(1)} s), ` +
      'one request at a time, public view, limit 50',
    '| request | matches | median ms | p90 ms |',
    '| --- | ---: | ---: | ---: |',
    ...report.rows.map(
      (row) => `| ${row.name} | ${row.matches} | ${row.median.toFixed(2)} | ${row.p90.toFixed(2)} |`,
    ),
    `start-up on that database (create to listening): median ${report.startupMedian.toFixed(0)} ms ` +
      `(${report.startups.map((ms) => ms.toFixed(0)).join(', ')}); ` +
      `to the end of the start-up work (readiness up): median ${report.readyMedian.toFixed(0)} ms ` +
      `(${report.readies.map((ms) => ms.toFixed(0)).join(', ')})`,
  ];
  return lines.join('\n');
}
