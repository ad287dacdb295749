import { RECENT_VERSION_MS } from '../src/community-plugins/caching/answer-version.repository';
import { login } from './helpers/accounts';
import {
  benignPlugin,
  marketplaceApp,
  readThenApprove,
  SignedInUser,
  upload,
  validFields,
} from './helpers/marketplace';
import { queriesDuring } from './helpers/logged-queries';
import { SmtpSink } from './helpers/smtp-sink';
import type { TestApp } from './helpers/test-app';

const LAST_USE = /^UPDATE\W+user_login_tokens\W+SET\W+last_used_at\b/i;

/**
 * Issue 33: the statements the busiest answers cost. The catalogue page every client loads
 * first is one statement after the guard's (the page and the list's kept size together), and a
 * login writes its token without reading it back.
 */
describe('statements of the hot paths', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let boss: SignedInUser;

  beforeAll(async () => {
    await smtp.start();
    ({
      t,
      users: { alice, boss },
    } = await marketplaceApp(smtp, ['alice', 'boss']));
    for (const name of ['Hot path one', 'Hot path two']) {
      const answer = await upload(t, alice.token, { fields: validFields(name), file: benignPlugin(name) });
      if (answer.status !== 201) throw new Error(`upload: ${answer.status} ${answer.text}`);
      await readThenApprove(t, boss.token, (answer.body as { data: { id: number } }).data.id).expect(200);
    }
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  /** The statements `work` makes the app run, the background workers' left out. */
  async function statementsOf(work: () => Promise<unknown>, queries: string[] = []): Promise<string[]> {
    await queriesDuring(t.dataSource, work, queries);
    // The outbox's poll, the re-check and the reconciler may query meanwhile: their tables
    // are none of these routes' but user_plugins and catalogue_counts, read only in the
    // reconciler's passes, which do not read a page.
    // A login's last use is written at most once a minute, not awaited by the request
    // (LoginsRepository.noteUse): the uploads above may take longer than that on a busy machine.
    return queries.filter(
      (query) =>
        !/outbox_jobs|plugin_rechecks|plugin_versions|audit_|file_path/.test(query) && !LAST_USE.test(query),
    );
  }

  it("a reader's first page: the guard's statement and one more, for the page and its total", async () => {
    let body: { data: { total: number; plugins: Array<{ name: string }> } } | undefined;
    const statements = await statementsOf(async () => {
      const answer = await t
        .http()
        .get('/api/v1/community-plugins/')
        .set('Authorization', `Bearer ${alice.token}`)
        .expect(200);
      body = answer.body as typeof body;
    });
    expect(body?.data.total).toBe(2);
    expect(body?.data.plugins.map((plugin) => plugin.name)).toEqual(['Hot path two', 'Hot path one']);
    expect(statements).toHaveLength(2);
    expect(statements[0]).toMatch(/user_login_tokens/);
    expect(statements[1]).toMatch(/catalogue_counts/);
    // Only the public view's columns: never file_path, nor what admins alone see.
    expect(statements[1]).not.toMatch(/file_path|rejection_reason|reviewed_by_user_id/);
  });

  it("a poll whose If-None-Match names the current page: the guard's statement and the version's, no plugin row", async () => {
    const page = await t
      .http()
      .get('/api/v1/community-plugins/')
      .set('Authorization', `Bearer ${alice.token}`)
      .expect(200);
    const queries: string[] = [];
    const statements = await statementsOf(async () => {
      await t
        .http()
        .get('/api/v1/community-plugins/')
        .set('Authorization', `Bearer ${alice.token}`)
        .set('If-None-Match', page.headers.etag as string)
        .expect(304);
    }, queries);
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/user_login_tokens/);
    // The version: the chain's head count and the kept counts, one statement; no plugin row read.
    const version = queries.filter(
      (query) => !/user_login_tokens|outbox_jobs|plugin_rechecks|plugin_versions|file_path/.test(query),
    );
    expect(
      version.filter((query) => /audit_chain/.test(query) && /catalogue_counts/.test(query)),
    ).toHaveLength(1);
    expect(version.filter((query) => /user_plugins/.test(query))).toEqual([]);
  });

  it('a full page a moment after a version was read is tagged with it; after a write answered, or a second, it is read again', async () => {
    const page = () =>
      t.http().get('/api/v1/community-plugins/').set('Authorization', `Bearer ${alice.token}`);
    const versionReads = async (work: () => Promise<unknown>) => {
      const queries: string[] = [];
      await statementsOf(work, queries);
      return queries.filter((query) => /audit_chain/.test(query) && /catalogue_counts/.test(query)).length;
    };
    t.clock.freeze();
    try {
      t.clock.advance(RECENT_VERSION_MS);
      let first: Awaited<ReturnType<typeof page>> | undefined;
      expect(await versionReads(async () => (first = await page().expect(200)))).toBe(1);
      let second: Awaited<ReturnType<typeof page>> | undefined;
      expect(await versionReads(async () => (second = await page().expect(200)))).toBe(0);
      expect(second?.headers.etag).toBe(first?.headers.etag);

      const [plugin] = (first?.body as { data: { plugins: Array<{ id: number }> } }).data.plugins;
      await t
        .http()
        .put(`/api/v1/community-plugins/${plugin.id}/rating/`)
        .set('Authorization', `Bearer ${boss.token}`)
        .send({ stars: 5 })
        .expect(200);
      let rated: Awaited<ReturnType<typeof page>> | undefined;
      expect(await versionReads(async () => (rated = await page().expect(200)))).toBe(1);
      expect(rated?.headers.etag).not.toBe(first?.headers.etag);

      t.clock.advance(RECENT_VERSION_MS);
      expect(await versionReads(() => page().expect(200))).toBe(1);
    } finally {
      t.clock.reset();
    }
  });

  it('a login: the expired tokens swept, the new one inserted and not read back', async () => {
    const statements = await statementsOf(() => login(t, alice));
    const tokenStatements = statements.filter((statement) => /user_login_tokens/.test(statement));
    expect(tokenStatements.map((statement) => statement.trim().split(/\s+/)[0].toUpperCase())).toEqual([
      'DELETE',
      'INSERT',
    ]);
  });
});
