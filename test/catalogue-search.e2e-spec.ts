import { dirname } from 'node:path';
import { Logger } from '@nestjs/common';
import { PluginFileReconciler } from '../src/community-plugins/files/plugin-file-reconciler';
import { PluginsRepository } from '../src/community-plugins/shared/plugins.repository';
import {
  benignPlugin,
  databaseUrlOf,
  SignedInUser,
  signUpAs,
  upload,
  readThenApprove,
} from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';
import { bootApp, createTestApp, TestApp } from './helpers/test-app';

interface Fixture {
  name: string;
  description: string;
  author: string;
  tags?: string;
  status: 'approved' | 'pending' | 'rejected';
}

/**
 * Chosen for the cases the index must get right: case, parts of words, LIKE's wildcards and
 * escape as plain characters, punctuation, text at the very end of a field, a query whose
 * trigrams all occur but never together, fields that must not run into one another, and
 * characters beyond ASCII (two bytes, three, and four: an emoji).
 */
const FIXTURES: Fixture[] = [
  {
    name: 'Web scanner',
    description: 'Finds 100% of pages on the web',
    author: 'Alice Example',
    tags: 'web,Scanner',
    status: 'approved',
  },
  {
    name: 'Port_checker',
    description: 'Checks open ports (TCP/UDP)',
    author: "Bob O'Brien",
    tags: 'network, c++',
    status: 'approved',
  },
  {
    name: 'Grep secrets',
    description: 'Looks for API keys in web pages!',
    author: 'Carol',
    tags: 'secrets,web-scanner',
    status: 'approved',
  },
  {
    name: 'abcd xbcde',
    description: 'Trigrams that never meet',
    author: 'Dave',
    tags: 'node.js',
    status: 'approved',
  },
  {
    name: 'Straße Prüfer',
    description: 'Über Ünïcödé and 🚀 rockets',
    author: 'Émile Zola',
    tags: 'i18n',
    status: 'approved',
  },
  { name: 'Field edge', description: 'ends with xyz', author: 'zzq', status: 'approved' },
  {
    name: 'Pending one',
    description: 'Waits for review of pages',
    author: 'Alice Example',
    tags: 'web',
    status: 'pending',
  },
  {
    name: 'Rejected one',
    description: 'Refused for web reasons',
    author: 'Alice Example',
    tags: 'web',
    status: 'rejected',
  },
];

/** What `q=` has always meant: the trimmed query, lower-cased, within the name, description or author, lower-cased. */
const matches = (fixture: Fixture, q: string) =>
  [fixture.name, fixture.description, fixture.author].some((field) =>
    field.toLowerCase().includes(q.trim().toLowerCase()),
  );

/** The queries compared; ASCII ones are also compared with the statement the catalogue ran before. */
const QUERIES = [
  'web',
  'WEB',
  'Web',
  'wEb ',
  ' scanner',
  'can',
  'anner',
  'ner s',
  'r sc',
  'port_',
  't_c',
  '_',
  '%',
  '100%',
  '!',
  '!!',
  'pages!',
  "o'brien",
  "'",
  '(tcp/udp)',
  'tcp/',
  '/',
  '.',
  'c++',
  '+',
  'xbcde',
  'abcde',
  'bcd',
  'bcde x',
  'abcd xbcde',
  'xyz',
  'yz',
  'z',
  'zzq',
  'xyzzzq',
  'xyz zzq',
  'a',
  'e',
  'ee',
  'never meet',
  'NEVER',
  'nomatchanywhere',
  'qqqq',
  'zq',
  'alice example',
  'carol',
  'ol',
  'checks open ports (tcp/udp)',
  'finds 100% of pages on the web',
  '1',
  '10',
  '100',
];
/** Beyond ASCII: folded by JavaScript's toLowerCase on both databases (see docs/decisions). */
const UNICODE_QUERIES = [
  'straße',
  'STRASSE',
  'PRÜFER',
  'prüfer',
  'über',
  'ÜNÏCÖDÉ',
  'ünï',
  'é',
  'É',
  '🚀',
  '🚀 r',
  'émile',
  'EMILE',
  'ß',
];

describe('catalogue search and tags through their index (issue 22)', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;
  let boss: SignedInUser;
  const ids = new Map<string, number>();

  const get = (user: SignedInUser, query: string) =>
    t.http().get(`/api/v1/community-plugins/${query}`).set('Authorization', `Bearer ${user.token}`);
  const page = async (user: SignedInUser, query: string) => {
    const response = await get(user, query).expect(200);
    const data = (response.body as { data: { total: number; plugins: Array<{ name: string }> } }).data;
    return { total: data.total, names: data.plugins.map((plugin) => plugin.name) };
  };
  /** Newest first: the fixtures were uploaded in order. */
  const expected = (q: string, status: Fixture['status'] = 'approved') =>
    FIXTURES.filter((fixture) => fixture.status === status && matches(fixture, q))
      .map((fixture) => fixture.name)
      .reverse();
  const q = (text: string) => `?q=${encodeURIComponent(text)}&limit=200`;

  /** The catalogue's statement before the index: LOWER(...) LIKE '%q%' on the row itself. */
  const before = async (text: string): Promise<string[]> => {
    const pattern = `%${text
      .trim()
      .toLowerCase()
      .replace(/[!%_]/g, (c) => `!${c}`)}%`;
    const rows = (await t.dataSource.query(
      "SELECT `name` FROM `user_plugins` WHERE `status` = 'approved' AND `file_altered_at` IS NULL AND " +
        "(LOWER(`name`) LIKE ? ESCAPE '!' OR LOWER(`description`) LIKE ? ESCAPE '!' OR LOWER(`author`) LIKE ? ESCAPE '!') " +
        'ORDER BY `created_at` DESC, `id` DESC',
      [pattern, pattern, pattern],
    )) as Array<{ name: string }>;
    return rows.map((row) => row.name);
  };

  const indexRows = async (id: number) => {
    const counts: Record<string, number> = {};
    for (const table of ['plugin_search', 'plugin_runs', 'plugin_tags']) {
      const [row] = (await t.dataSource.query(`SELECT COUNT(*) AS n FROM \`${table}\` WHERE plugin_id = ?`, [
        id,
      ])) as Array<{ n: number | string }>;
      counts[table] = Number(row.n);
    }
    return counts;
  };

  /** The lists a row `p` is in, as the index codes them. */
  const listOfRow =
    "CASE WHEN p.status <> 'approved' THEN 0 WHEN p.file_altered_at IS NULL THEN 2 ELSE 1 END";

  /** Every plugin indexed once, in its lists and with its date; nothing indexed that is not a plugin. */
  const expectIndexInStep = async () => {
    const createdMs = (rows: Array<{ created_at: unknown }>) =>
      rows.map((row) =>
        row.created_at instanceof Date
          ? row.created_at.getTime()
          : Date.parse(`${String(row.created_at).replace(' ', 'T')}Z`),
      );
    const [row] = (await t.dataSource.query(
      'SELECT ' +
        '(SELECT COUNT(*) FROM user_plugins) AS plugins, ' +
        '(SELECT COUNT(*) FROM plugin_search) AS searched, ' +
        '(SELECT COUNT(*) FROM user_plugins p WHERE NOT EXISTS (SELECT 1 FROM plugin_search s WHERE s.plugin_id = p.id)) AS unindexed, ' +
        '(SELECT COUNT(*) FROM user_plugins p WHERE NOT EXISTS (SELECT 1 FROM plugin_runs r WHERE r.plugin_id = p.id)) AS without_runs, ' +
        `(SELECT COUNT(*) FROM user_plugins p JOIN plugin_search s ON s.plugin_id = p.id WHERE s.list <> ${listOfRow}) AS search_listed_wrong, ` +
        `(SELECT COUNT(*) FROM user_plugins p JOIN plugin_runs r ON r.plugin_id = p.id WHERE r.list <> ${listOfRow}) AS runs_listed_wrong, ` +
        '(SELECT COUNT(*) FROM plugin_runs r WHERE NOT EXISTS (SELECT 1 FROM user_plugins p WHERE p.id = r.plugin_id)) AS stray_runs, ' +
        '(SELECT COUNT(*) FROM plugin_tags g WHERE NOT EXISTS (SELECT 1 FROM user_plugins p WHERE p.id = g.plugin_id)) AS stray_tags',
    )) as Array<Record<string, number | string>>;
    expect(Object.fromEntries(Object.entries(row).map(([key, value]) => [key, Number(value)]))).toEqual({
      plugins: Number(row.plugins),
      searched: Number(row.plugins),
      unindexed: 0,
      without_runs: 0,
      search_listed_wrong: 0,
      runs_listed_wrong: 0,
      stray_runs: 0,
      stray_tags: 0,
    });
    // Each run carries its plugin's created_at, to the millisecond.
    const dates = (await t.dataSource.query(
      'SELECT DISTINCT p.id, p.created_at, r.created_ms FROM user_plugins p JOIN plugin_runs r ON r.plugin_id = p.id ORDER BY p.id',
    )) as Array<{ id: number; created_at: unknown; created_ms: number | string }>;
    expect(dates.map((date) => Number(date.created_ms))).toEqual(createdMs(dates));
  };

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp, env: { SVC_ADMIN_EMAILS: 'boss@example.com' } });
    alice = await signUpAs(t, smtp, 'alice');
    bob = await signUpAs(t, smtp, 'bob');
    boss = await signUpAs(t, smtp, 'boss');
    for (const fixture of FIXTURES) {
      t.clock.advance(1000);
      const fields: Record<string, string> = {
        name: fixture.name,
        description: fixture.description,
        author: fixture.author,
        group: 'web',
        type: 'passive',
      };
      if (fixture.tags) fields.tags = fixture.tags;
      const response = await upload(t, alice.token, { fields, file: benignPlugin(fixture.name) }).expect(201);
      const id = (response.body as { data: { id: number } }).data.id;
      ids.set(fixture.name, id);
      if (fixture.status === 'approved') await readThenApprove(t, boss.token, id).expect(200);
      if (fixture.status === 'rejected')
        await t
          .http()
          .post(`/api/v1/community-plugins/${id}/reject/`)
          .set('Authorization', `Bearer ${boss.token}`)
          .send({ reason: 'Not now' })
          .expect(200);
    }
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  it('q= gives what the LIKE on the rows gave: case, parts of words, wildcards and punctuation as plain text', async () => {
    for (const text of QUERIES) {
      const got = await page(bob, q(text));
      expect({ text, names: got.names }).toEqual({ text, names: await before(text) });
      expect({ text, names: got.names, total: got.total }).toEqual({
        text,
        names: expected(text),
        total: expected(text).length,
      });
    }
  });

  it('q= beyond ASCII folds case the same way on both databases', async () => {
    for (const text of UNICODE_QUERIES) {
      expect({ text, names: (await page(bob, q(text))).names }).toEqual({ text, names: expected(text) });
    }
    // Nothing folds what lower-casing does not: no accent-insensitive or ß/ss matches.
    expect((await page(bob, q('strasse'))).names).toEqual([]);
    expect((await page(bob, q('emile'))).names).toEqual([]);
  });

  it('q= never matches across two fields, and a query of 200 characters is answered', async () => {
    // "Field edge" + "ends with xyz" + "zzq": none of these runs across a field's end.
    expect((await page(bob, q('edgeends'))).names).toEqual([]);
    expect((await page(bob, q('xyzzzq'))).names).toEqual([]);
    expect((await page(bob, q('ezzq'))).names).toEqual([]);
    expect((await page(bob, q('x'.repeat(200)))).names).toEqual([]);
    expect((await page(bob, q('web '.repeat(50)))).names).toEqual([]);
  });

  it('q= with status, tag, group and pages; admins search the pending and rejected lists', async () => {
    expect(await page(boss, `?status=pending&q=PAGES`)).toEqual({ total: 1, names: ['Pending one'] });
    expect(await page(boss, `?status=rejected&q=web`)).toEqual({ total: 1, names: ['Rejected one'] });
    expect(await page(bob, `?q=web&tag=web`)).toEqual({ total: 1, names: ['Web scanner'] });
    expect(await page(bob, `?q=web&group=network`)).toEqual({ total: 0, names: [] });
    expect(await page(bob, `?q=e&limit=2&offset=1`)).toEqual({
      total: expected('e').length,
      names: expected('e').slice(1, 3),
    });
    expect(await page(bob, `?q=pages&offset=5`)).toEqual({ total: expected('pages').length, names: [] });
  });

  it('tag= finds whole tags only, in any case, with their punctuation', async () => {
    const tagged = async (tag: string) =>
      (await page(bob, `?tag=${encodeURIComponent(tag)}&limit=200`)).names;
    expect(await tagged('web')).toEqual(['Web scanner']);
    expect(await tagged('WEB')).toEqual(['Web scanner']);
    expect(await tagged(' Web ')).toEqual(['Web scanner']);
    expect(await tagged('scanner')).toEqual(['Web scanner']);
    expect(await tagged('web-scanner')).toEqual(['Grep secrets']);
    expect(await tagged('c++')).toEqual(['Port_checker']);
    expect(await tagged('C++')).toEqual(['Port_checker']);
    expect(await tagged('c')).toEqual([]);
    expect(await tagged('node.js')).toEqual(['abcd xbcde']);
    expect(await tagged('node')).toEqual([]);
    expect(await tagged('i18n')).toEqual(['Straße Prüfer']);
    expect(await tagged('we')).toEqual([]);
    expect(await page(boss, '?status=pending&tag=web')).toEqual({ total: 1, names: ['Pending one'] });
    // Tags hold no spaces or commas: such a filter is refused, as before.
    for (const tag of ['web,network', 'web scanner', 'web%']) {
      const refused = await get(bob, `?tag=${encodeURIComponent(tag)}`).expect(400);
      expect((refused.body as { message: string }).message).toBe('Invalid query parameters');
    }
  });

  it('review decisions move a plugin between lists; its index rows stay one set', async () => {
    const id = ids.get('Web scanner')!;
    await t
      .http()
      .post(`/api/v1/community-plugins/${id}/reject/`)
      .set('Authorization', `Bearer ${boss.token}`)
      .send({ reason: 'Revoked' })
      .expect(200);
    expect((await page(bob, q('scanner'))).names).toEqual([]);
    expect((await page(bob, '?tag=scanner')).names).toEqual([]);
    expect((await page(boss, `?status=rejected${q('scanner').replace('?', '&')}`)).names).toEqual([
      'Web scanner',
    ]);
    await readThenApprove(t, boss.token, id).expect(200);
    expect((await page(bob, q('SCANNER'))).names).toEqual(['Web scanner']);
    expect((await page(bob, '?tag=scanner')).names).toEqual(['Web scanner']);
    await expectIndexInStep();
  });

  it('a change to the indexed text (through the repository every write uses) re-indexes in its transaction', async () => {
    const id = ids.get('Field edge')!;
    const repository = t.app.get(PluginsRepository);
    await t.dataSource.transaction((manager) =>
      repository.update(manager, id, { description: 'Now about quasars', tags: ['astro'] }),
    );
    expect((await page(bob, q('xyz'))).names).toEqual([]);
    expect((await page(bob, q('QUASAR'))).names).toEqual(['Field edge']);
    expect((await page(bob, '?tag=astro')).names).toEqual(['Field edge']);
    // A transaction that fails leaves the index as the row: both rolled back.
    await expect(
      t.dataSource.transaction(async (manager) => {
        await repository.update(manager, id, { description: 'Rolled back pulsars' });
        throw new Error('abandoned');
      }),
    ).rejects.toThrow('abandoned');
    expect((await page(bob, q('pulsar'))).names).toEqual([]);
    expect((await page(bob, q('quasar'))).names).toEqual(['Field edge']);
    await expectIndexInStep();
  });

  it('uploads sent at once are each indexed; a refused duplicate leaves no index rows', async () => {
    const names = ['Burst alpha', 'Burst beta', 'Burst gamma', 'Burst beta'];
    const responses = await Promise.all(
      names.map((name, index) =>
        upload(t, alice.token, {
          fields: {
            name,
            description: `Burst number ${index}`,
            author: 'Zed',
            group: 'web',
            type: 'passive',
            tags: 'burst',
          },
          file: benignPlugin(`${name} ${index}`),
        }),
      ),
    );
    expect(responses.map((response) => response.status).sort()).toEqual([201, 201, 201, 409]);
    expect((await page(boss, '?status=pending&q=burst&limit=200')).total).toBe(3);
    expect((await page(boss, '?status=pending&tag=burst&limit=200')).total).toBe(3);
    await expectIndexInStep();
  });

  it('delete removes the plugin from q= and tag= with its index rows', async () => {
    const id = ids.get('Grep secrets')!;
    expect(await indexRows(id)).toEqual({
      plugin_search: 1,
      plugin_runs: expect.any(Number) as number,
      plugin_tags: 2,
    });
    await t
      .http()
      .delete(`/api/v1/community-plugins/${id}/delete/`)
      .set('Authorization', `Bearer ${boss.token}`)
      .expect(200);
    expect(await indexRows(id)).toEqual({ plugin_search: 0, plugin_runs: 0, plugin_tags: 0 });
    expect((await page(bob, q('secrets'))).names).toEqual([]);
    expect((await page(bob, '?tag=secrets')).names).toEqual([]);
    await expectIndexInStep();
  });

  it('the migrations index existing plugins; a start or a pass indexes what older code wrote and moves what it moved', async () => {
    const queries = [...QUERIES, ...UNICODE_QUERIES];
    const answers = async (app: TestApp) => {
      const found: Record<string, string[]> = {};
      for (const text of queries) {
        const response = await app
          .http()
          .get(`/api/v1/community-plugins/${q(text)}`)
          .set('Authorization', `Bearer ${bob.token}`)
          .expect(200);
        found[text] = (response.body as { data: { plugins: Array<{ name: string }> } }).data.plugins.map(
          (plugin) => plugin.name,
        );
      }
      return found;
    };
    const reference = await answers(t);
    const url = databaseUrlOf(t);
    const dataDir = dirname(t.config.communityPluginDir);
    const logs = jest.spyOn(Logger.prototype, 'log');
    const warnings = jest.spyOn(Logger.prototype, 'warn');
    const restart = async () => {
      await t.close();
      logs.mockClear();
      t = await bootApp({ databaseUrl: url, dataDir, smtp, env: { SVC_ADMIN_EMAILS: 'boss@example.com' } });
      return logs.mock.calls.map(([line]) => String(line));
    };

    // As the schema was before the runs: no runs, no `list` in plugin_search, that migration not run.
    await t.dataSource.query('DROP TABLE plugin_runs');
    await t.dataSource.query('ALTER TABLE plugin_search DROP COLUMN list');
    await t.dataSource.query("DELETE FROM migrations WHERE name = 'CatalogueSearchRuns1763699400000'");
    expect(await restart()).toContain('Applied CatalogueSearchRuns1763699400000');
    expect(await answers(t)).toEqual(reference);
    await expectIndexInStep();

    // As before any search index: no index tables, neither migration run.
    for (const table of ['plugin_runs', 'plugin_grams', 'plugin_tags', 'plugin_search'])
      await t.dataSource.query(`DROP TABLE ${table}`);
    for (const migration of ['CatalogueSearchIndex1763694000000', 'CatalogueSearchRuns1763699400000'])
      await t.dataSource.query('DELETE FROM migrations WHERE name = ?', [migration]);
    expect(await restart()).toEqual(
      expect.arrayContaining([
        'Applied CatalogueSearchIndex1763694000000',
        'Applied CatalogueSearchRuns1763699400000',
      ]),
    );
    expect(await answers(t)).toEqual(reference);
    await expectIndexInStep();

    // A row an older replica wrote has no index rows: the next start adds them.
    const id = ids.get('Port_checker')!;
    for (const table of ['plugin_runs', 'plugin_tags', 'plugin_search'])
      await t.dataSource.query(`DELETE FROM ${table} WHERE plugin_id = ?`, [id]);
    expect((await page(bob, q('port_'))).names).toEqual([]);
    expect(await restart()).toContain('Indexed 1 plugin(s) for search and tags');
    expect(await answers(t)).toEqual(reference);
    expect((await page(bob, '?tag=c%2B%2B')).names).toEqual(['Port_checker']);
    await expectIndexInStep();

    // An older replica revokes it without the index: its runs still say listed until the next pass.
    await t.dataSource.query("UPDATE user_plugins SET status = 'rejected' WHERE id = ?", [id]);
    expect((await page(bob, q('port_'))).names).toEqual(['Port_checker']);
    warnings.mockClear();
    await t.app.get(PluginFileReconciler).reconcile();
    expect(warnings.mock.calls.map(([line]) => String(line))).toContain(
      '1 plugin(s) were in other catalogue lists than their search index said: corrected ' +
        '(a writer that does not keep the index, such as a replica on older code, moved them)',
    );
    expect((await page(bob, q('port_'))).names).toEqual([]);
    expect(await page(boss, `?status=rejected${q('port_').replace('?', '&')}`)).toEqual({
      total: 1,
      names: ['Port_checker'],
    });
    await expectIndexInStep();
    logs.mockRestore();
    warnings.mockRestore();
  });
});
