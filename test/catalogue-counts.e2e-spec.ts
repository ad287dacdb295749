import { Logger } from '@nestjs/common';
import { seedCatalogue } from '../bench/catalogue-scale';
import { PluginFileReconciler } from '../src/community-plugins/files/plugin-file-reconciler';
import { CHECKPOINT_EVERY } from '../src/community-plugins/catalogue/catalogue-sql';
import { PluginsRepository } from '../src/community-plugins/shared/plugins.repository';
import {
  benignPlugin,
  catalogueCounts,
  countPlugins,
  SignedInUser,
  marketplaceApp,
  readThenApprove,
  upload,
  validFields,
} from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';
import type { TestApp } from './helpers/test-app';

/** What a plain COUNT and OFFSET say a page of a list is: the catalogue must answer the same. */
const LISTS = {
  public: "status = 'approved' AND file_altered_at IS NULL",
  admin: "status = 'approved'",
} as const;

/**
 * Issue 22: the unfiltered catalogue's size is kept in `catalogue_counts` rather than counted for
 * every page, and a deep newest-first page starts from a remembered checkpoint rather than
 * walking the list from its end. The counts must stay exact whatever writes race, and the pages
 * must be the ones a plain OFFSET gives, before and after the list changes.
 */
describe('catalogue: kept counts and deep pages', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;
  let boss: SignedInUser;
  let chief: SignedInUser;

  beforeAll(async () => {
    await smtp.start();
    ({
      t,
      users: { alice, bob, boss, chief },
    } = await marketplaceApp(smtp, ['alice', 'bob', 'boss', 'chief']));
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  const uploadAs = async (user: SignedInUser, name: string): Promise<number> => {
    const answer = await upload(t, user.token, { fields: validFields(name), file: benignPlugin(name) });
    expect(answer.status).toBe(201);
    return (answer.body as { data: { id: number } }).data.id;
  };
  const act = (admin: SignedInUser, action: 'approve' | 'reject' | 'delete', id: number) => {
    // An admin approves what they read: the source first.
    if (action === 'approve') return readThenApprove(t, admin.token, id);
    const path = `/api/v1/community-plugins/${id}/${action}/`;
    const call = action === 'delete' ? t.http().delete(path) : t.http().post(path);
    call.set('Authorization', `Bearer ${admin.token}`);
    return action === 'reject' ? call.send({ reason: 'Not today' }) : call;
  };
  const page = async (user: SignedInUser, query: string) => {
    const answer = await t
      .http()
      .get(`/api/v1/community-plugins/?${query}`)
      .set('Authorization', `Bearer ${user.token}`);
    expect(answer.status).toBe(200);
    const data = (answer.body as { data: { total: number; plugins: Array<{ id: number }> } }).data;
    return { total: data.total, ids: data.plugins.map((plugin) => plugin.id) };
  };
  const counted = (where: string) => countPlugins(t, where);
  const offsetPage = async (where: string, limit: number, offset: number) =>
    (
      (await t.dataSource.query(
        `SELECT id FROM user_plugins WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
        [limit, offset],
      )) as Array<{ id: unknown }>
    ).map((row) => Number(row.id));

  /** The kept counts equal the rows counted, and both views' totals say the same. */
  async function expectExactCounts(): Promise<void> {
    const { kept, counted: rows } = await catalogueCounts(t);
    expect(kept).toEqual(rows);
    expect((await page(bob, 'limit=1')).total).toBe(rows.listed);
    expect((await page(boss, 'limit=1')).total).toBe(rows.approved);
  }

  it('approvals, revocations, deletes and altered marks fired at once leave the counts exact', async () => {
    const ids: number[] = [];
    for (let index = 0; index < 24; index += 1) ids.push(await uploadAs(alice, `Counted ${index}`));
    // Half approved first.
    for (const id of ids.slice(0, 12)) expect((await act(boss, 'approve', id)).status).toBe(200);
    await expectExactCounts();

    // The marks are set as the reconciler sets them (its pass would also recount, hiding a
    // miscount here); the reconciler itself clears one below.
    const repository = t.app.get(PluginsRepository);
    const marked = new Date();
    const answers = await Promise.all([
      // The pending half approved by two admins at once, two of them deleted at the same time.
      ...ids.slice(12).map((id, index) => act(index % 2 === 0 ? boss : chief, 'approve', id)),
      act(chief, 'delete', ids[12]),
      act(boss, 'delete', ids[13]),
      // Approved ones revoked, deleted, or both at once; one marked altered and deleted at once.
      act(chief, 'reject', ids[4]),
      act(boss, 'reject', ids[5]),
      act(chief, 'delete', ids[5]),
      act(boss, 'delete', ids[6]),
      act(chief, 'delete', ids[1]),
      act(boss, 'reject', ids[7]),
      act(chief, 'approve', ids[7]),
      act(boss, 'reject', ids[2]),
      // Files found altered meanwhile: out of the public list, in the admins' one.
      repository.setFileAltered(ids[0], marked),
      repository.setFileAltered(ids[1], marked),
      repository.setFileAltered(ids[2], marked),
      repository.setFileAltered(ids[3], marked),
      repository.setFileAltered(ids[3], null),
      repository.setFileAltered(ids[14], marked),
    ]);
    const statuses = answers.map((answer) => (typeof answer === 'boolean' ? 200 : answer.status));
    expect(statuses.filter((status) => ![200, 404, 409].includes(status))).toEqual([]);
    await expectExactCounts();
    expect(await counted(`id = ${ids[0]} AND file_altered_at IS NOT NULL`)).toBe(1);

    // Its file has its digest: the reconciler clears the mark, and the plugin is listed again.
    const warnings = jest.spyOn(Logger.prototype, 'warn');
    try {
      expect((await t.app.get(PluginFileReconciler).reconcile()).unaltered).toContain(ids[0]);
      // The counts were right: the pass found nothing to correct.
      expect(warnings.mock.calls.map(([message]) => String(message))).not.toContainEqual(
        expect.stringMatching(/^The count of /),
      );
    } finally {
      warnings.mockRestore();
    }
    await expectExactCounts();
  }, 120_000);

  it('a count left wrong by a writer that bypasses it (an older replica) is put right by the next pass, and logged', async () => {
    const id = await uploadAs(alice, 'Written around');
    expect((await act(boss, 'approve', id)).status).toBe(200);
    // As code that does not know the counts would: the status changes, the counts do not.
    await t.dataSource.query("UPDATE user_plugins SET status = 'rejected' WHERE id = ?", [id]);
    const { kept, counted: rows } = await catalogueCounts(t);
    expect(kept.listed).toBe(rows.listed + 1);

    const warnings = jest.spyOn(Logger.prototype, 'warn');
    try {
      await t.app.get(PluginFileReconciler).reconcile();
      const lines = warnings.mock.calls.map(([message]) => String(message));
      expect(lines).toEqual(
        expect.arrayContaining([
          `The count of the approved catalogue list was ${rows.approved + 1}, the rows say ${rows.approved}: ` +
            'corrected (a writer that does not keep the count, such as a replica on older code, changed the list)',
          `The count of the listed catalogue list was ${rows.listed + 1}, the rows say ${rows.listed}: ` +
            'corrected (a writer that does not keep the count, such as a replica on older code, changed the list)',
        ]),
      );
    } finally {
      warnings.mockRestore();
    }
    await expectExactCounts();
  });

  it('deep pages are the plain OFFSET pages, on both views, in order, and again after the list changes', async () => {
    const plugins = 2 * CHECKPOINT_EVERY + 700;
    await seedCatalogue(t.dataSource, t.config.communityPluginDir, plugins, alice.id);
    // Runs of plugins uploaded in the same millisecond, some across a checkpoint: the order
    // falls back to the id there.
    const seeded = (await t.dataSource.query(
      "SELECT id, created_at FROM user_plugins WHERE name LIKE 'scale-%' ORDER BY id",
    )) as Array<{ id: unknown; created_at: unknown }>;
    for (let start = 0; start < seeded.length; start += 7) {
      const run = seeded.slice(start, start + 7).map((row) => Number(row.id));
      await t.dataSource.query(
        `UPDATE user_plugins SET created_at = ? WHERE id IN (${run.map(() => '?').join(', ')})`,
        [seeded[start].created_at, ...run],
      );
    }
    const repository = t.app.get(PluginsRepository);
    // A few altered files: out of the public list, still in the admins' one.
    for (const row of seeded.slice(1500, 1505))
      expect(await repository.setFileAltered(Number(row.id), new Date())).toBe(true);
    // As a start would after rows were written around the app.
    await repository.recountCatalogue();
    await expectExactCounts();

    const compare = async () => {
      for (const [view, where] of Object.entries(LISTS)) {
        const user = view === 'public' ? bob : boss;
        const total = await counted(where);
        const offsets = [
          0,
          CHECKPOINT_EVERY - 1,
          CHECKPOINT_EVERY,
          CHECKPOINT_EVERY + 1,
          CHECKPOINT_EVERY + 321,
          Math.floor(total / 2),
          2 * CHECKPOINT_EVERY - 3,
          2 * CHECKPOINT_EVERY,
          total - 2 * CHECKPOINT_EVERY,
          total - 50,
          total - 1,
          total,
        ];
        for (const limit of [1, 7, 50, 200]) {
          for (const offset of offsets) {
            const answer = await page(user, `limit=${limit}&offset=${offset}`);
            expect({ view, limit, offset, ...answer }).toEqual({
              view,
              limit,
              offset,
              total,
              ids: await offsetPage(where, limit, offset),
            });
          }
        }
      }
    };
    await compare();
    // Pages read again come from the remembered checkpoints: still the same.
    await compare();

    // A plugin near the newest end leaves, another joins: every deep position moves by one.
    expect((await act(boss, 'delete', Number(seeded[plugins - 3].id))).status).toBe(200);
    await compare();
    const joining = await uploadAs(alice, 'Joins the list');
    expect((await act(chief, 'approve', joining)).status).toBe(200);
    await compare();
    await expectExactCounts();
  }, 180_000);
});
