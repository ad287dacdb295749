import { Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { existsSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Response } from 'supertest';
import { fail } from './helpers/envelopes';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';
import {
  ADMIN_VIEW_KEYS as ADMIN_KEYS,
  benignPlugin,
  OWNER_VIEW_KEYS as OWNER_KEYS,
  PUBLIC_VIEW_KEYS as PUBLIC_KEYS,
  readThenApprove,
  SignedInUser,
  signUpAs,
  upload,
  validFields,
} from './helpers/marketplace';

const forbidden = fail('Admin privileges required');
const notFound = fail('Plugin not found');

const keysOf = (value: unknown) => Object.keys(value as object).sort();

interface PluginView {
  id: number;
  name: string;
  status: string;
  [key: string]: unknown;
}

describe('community plugins: catalogue, review, views', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;
  let boss: SignedInUser;

  const api = (path: string) => `/api/v1/community-plugins/${path}`;
  const get = (user: SignedInUser, path: string) =>
    t.http().get(api(path)).set('Authorization', `Bearer ${user.token}`);
  const post = (user: SignedInUser, path: string) =>
    t.http().post(api(path)).set('Authorization', `Bearer ${user.token}`);
  /** As an admin approves: after reading the source (see readThenApprove). */
  const approve = (user: SignedInUser, id: number | string) => readThenApprove(t, user.token, id);
  const del = (user: SignedInUser, path: string) =>
    t.http().delete(api(path)).set('Authorization', `Bearer ${user.token}`);
  const as = (user: SignedInUser, method: 'get' | 'post' | 'delete', path: string) => {
    const client = t.http();
    return client[method](api(path)).set('Authorization', `Bearer ${user.token}`);
  };
  const data = <T = PluginView>(response: Response): T => (response.body as { data: T }).data;

  async function uploaded(
    user: SignedInUser,
    name: string,
    fields: Record<string, string> = {},
  ): Promise<PluginView> {
    const response = await upload(t, user.token, {
      fields: { ...validFields(name), ...fields },
      file: benignPlugin(name),
    });
    expect(response.status).toBe(201);
    return data(response);
  }

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp, env: { SVC_ADMIN_EMAILS: 'boss@example.com' } });
    alice = await signUpAs(t, smtp, 'alice');
    bob = await signUpAs(t, smtp, 'bob');
    boss = await signUpAs(t, smtp, 'boss');
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });
  afterEach(() => {
    t.clock.reset();
    jest.restoreAllMocks();
  });

  describe('GET me/', () => {
    it('answers the caller as {id, name, email, is_admin}', async () => {
      expect((await get(alice, 'me/').expect(200)).body).toEqual({
        status: 'success',
        data: { id: alice.id, name: 'alice', email: 'alice@example.com', is_admin: false },
      });
      expect(data(await get(boss, 'me/').expect(200))).toEqual({
        id: boss.id,
        name: 'boss',
        email: 'boss@example.com',
        is_admin: true,
      });
    });

    it('is also /api/v1/me, with and without the slash; no token is 401', async () => {
      for (const path of ['/api/v1/me', '/api/v1/me/']) {
        const answer = await t.http().get(path).set('Authorization', `Bearer ${alice.token}`).expect(200);
        expect(answer.body).toEqual({
          status: 'success',
          data: { id: alice.id, name: 'alice', email: 'alice@example.com', is_admin: false },
        });
      }
      expect((await t.http().get('/api/v1/me/').expect(401)).body).toEqual({
        status: 'fail',
        message: 'Unauthorized',
      });
    });
  });

  describe('every endpoint needs a token', () => {
    it.each([
      ['post', 'upload'],
      ['get', ''],
      ['get', 'me/'],
      ['get', 'mine/'],
      ['get', '1/'],
      ['get', '1/source/'],
      ['post', '1/approve/'],
      ['post', '1/reject/'],
      ['delete', '1/delete/'],
      ['get', '1/review-history/'],
    ] as const)('%s %s -> 401', async (method, path) => {
      const response = await t.http()[method](api(path));
      expect({ status: response.status, body: response.body as unknown }).toEqual({
        status: 401,
        body: fail('Unauthorized'),
      });
    });
  });

  describe('admin-only endpoints', () => {
    it.each([
      ['get', 'source/'],
      ['post', 'approve/'],
      ['post', 'reject/'],
      ['delete', 'delete/'],
      ['get', 'review-history/'],
    ] as const)(
      '%s <id>/%s: 403 for users, the uploader included, whether the plugin exists or not; 404 for admins on unknown ids',
      async (method, action) => {
        const plugin = await uploaded(alice, `Guarded ${method} ${action}`);
        for (const user of [alice, bob]) {
          for (const id of [String(plugin.id), '999999', 'abc']) {
            const response = await as(user, method, `${id}/${action}`).send({ reason: 'r' });
            expect({ status: response.status, body: response.body as unknown }).toEqual({
              status: 403,
              body: forbidden,
            });
          }
        }
        for (const id of ['999999', 'abc', '0', '-1', '1.5', '01', '99999999999']) {
          const response = await as(boss, method, `${id}/${action}`).send({ reason: 'r' });
          expect({ status: response.status, body: response.body as unknown }).toEqual({
            status: 404,
            body: notFound,
          });
        }
      },
    );
  });

  describe('GET <id>/', () => {
    it('shows a pending plugin only to its uploader (owner view) and admins (admin view)', async () => {
      const plugin = await uploaded(alice, 'Detail pending', { execution_timeout: '120' });
      const own = data(await get(alice, `${plugin.id}/`).expect(200));
      expect(keysOf(own)).toEqual(OWNER_KEYS);
      expect(own).toEqual(plugin);
      const admin = data(await get(boss, `${plugin.id}/`).expect(200));
      expect(keysOf(admin)).toEqual(ADMIN_KEYS);
      expect(admin).toEqual({
        ...plugin,
        reviewed_by_user_id: null,
        reviewed_at: null,
        file_missing: false,
        file_altered: false,
        pending_version: '1.0.0',
        recheck_findings: null,
        recheck_rules_version: null,
        execution_timeout: 120,
      });
      expect((await get(bob, `${plugin.id}/`).expect(404)).body).toEqual(notFound);
    });

    it('shows an approved plugin to everyone: public view for others, owner view for the uploader, admin view for admins', async () => {
      const plugin = await uploaded(alice, 'Detail approved');
      await approve(boss, plugin.id).expect(200);
      expect(keysOf(data(await get(bob, `${plugin.id}/`).expect(200)))).toEqual(PUBLIC_KEYS);
      expect(keysOf(data(await get(alice, `${plugin.id}/`).expect(200)))).toEqual(OWNER_KEYS);
      expect(keysOf(data(await get(boss, `${plugin.id}/`).expect(200)))).toEqual(ADMIN_KEYS);
    });

    it('hides a rejected plugin from other users', async () => {
      const plugin = await uploaded(alice, 'Detail rejected');
      await post(boss, `${plugin.id}/reject/`).send({ reason: 'No' }).expect(200);
      expect((await get(bob, `${plugin.id}/`).expect(404)).body).toEqual(notFound);
      expect(data(await get(alice, `${plugin.id}/`).expect(200))).toMatchObject({
        status: 'rejected',
        rejection_reason: 'No',
      });
    });

    it('404 `Plugin not found` for unknown and malformed ids', async () => {
      for (const id of ['999999', 'abc', '0', '-1', '1.5', '1e3', '01', '99999999999', 'upload', '%20']) {
        expect((await get(bob, `${id}/`).expect(404)).body).toEqual(notFound);
      }
    });
  });

  describe('GET mine/', () => {
    it("lists the caller's own uploads, newest first, in owner view with rejection reasons", async () => {
      const carol = await signUpAs(t, smtp, 'carol');
      const first = await uploaded(carol, 'Carol first');
      t.clock.advance(1000);
      const second = await uploaded(carol, 'Carol second');
      t.clock.advance(1000);
      const third = await uploaded(carol, 'Carol third');
      await post(boss, `${first.id}/reject/`).send({ reason: 'Too noisy' }).expect(200);
      await approve(boss, second.id).expect(200);
      await uploaded(alice, 'Not carols');

      const page = data<{ total: number; limit: number; offset: number; plugins: PluginView[] }>(
        await get(carol, 'mine/').expect(200),
      );
      expect(keysOf(page)).toEqual(['limit', 'offset', 'plugins', 'total']);
      expect([page.total, page.limit, page.offset]).toEqual([3, 50, 0]);
      const mine = page.plugins;
      expect(mine.map((plugin) => [plugin.name, plugin.status, plugin.rejection_reason])).toEqual([
        [third.name, 'pending', null],
        [second.name, 'approved', null],
        [first.name, 'rejected', 'Too noisy'],
      ]);
      for (const plugin of mine) expect(keysOf(plugin)).toEqual(OWNER_KEYS);

      const dave = await signUpAs(t, smtp, 'dave');
      expect((await get(dave, 'mine/').expect(200)).body).toEqual({
        status: 'success',
        data: { total: 0, limit: 50, offset: 0, plugins: [] },
      });
    });

    it('gives an admin their own uploads in owner view, too', async () => {
      await uploaded(boss, 'Boss own');
      const mine = data<{ plugins: PluginView[] }>(await get(boss, 'mine/').expect(200)).plugins;
      expect(mine.map((plugin) => plugin.name)).toContain('Boss own');
      for (const plugin of mine) expect(keysOf(plugin)).toEqual(OWNER_KEYS);
    });
  });

  describe('GET / (the catalogue)', () => {
    /** A catalogue of its own: everything else in this file is deleted first. */
    let catalogue: Record<string, PluginView>;

    beforeAll(async () => {
      for (const status of ['approved', 'pending', 'rejected']) {
        const page = data<{ plugins: PluginView[] }>(
          await get(boss, `?status=${status}&limit=200`).expect(200),
        );
        for (const plugin of page.plugins) await del(boss, `${plugin.id}/delete/`).expect(200);
      }
      catalogue = {};
      const specs: Array<[string, Record<string, string>, 'approve' | 'reject' | null]> = [
        ['Web scanner', { group: 'web', type: 'active', description: 'Crawls 100% of a site' }, 'approve'],
        ['Port_checker', { group: 'network', type: 'passive', description: 'Checks ports' }, 'approve'],
        [
          'Grep secrets',
          { group: 'auxiliary', type: 'grep', description: 'Finds keys in WEB pages' },
          'approve',
        ],
        ['Pending one', { group: 'web', type: 'active', description: 'Waits' }, null],
        ['Rejected one', { group: 'web', type: 'active', description: 'Refused' }, 'reject'],
      ];
      for (const [name, fields, review] of specs) {
        t.clock.advance(1000);
        const plugin = await uploaded(alice, name, fields);
        if (review === 'approve') await approve(boss, plugin.id).expect(200);
        if (review === 'reject')
          await post(boss, `${plugin.id}/reject/`).send({ reason: 'Unsafe' }).expect(200);
        catalogue[name] = plugin;
      }
    });

    const names = (response: Response) =>
      data<{ plugins: PluginView[] }>(response).plugins.map((plugin) => plugin.name);

    it('lists approved plugins only, newest first, in public view for users', async () => {
      for (const user of [bob, alice]) {
        const response = await get(user, '').expect(200);
        const page = data<{ total: number; limit: number; offset: number; plugins: PluginView[] }>(response);
        expect({ total: page.total, limit: page.limit, offset: page.offset }).toEqual({
          total: 3,
          limit: 50,
          offset: 0,
        });
        expect(names(response)).toEqual(['Grep secrets', 'Port_checker', 'Web scanner']);
        for (const plugin of page.plugins) {
          expect(keysOf(plugin)).toEqual(PUBLIC_KEYS);
          expect(plugin.status).toBe('approved');
        }
      }
    });

    it('gives admins the admin view, and the pending and rejected lists', async () => {
      const approved = data<{ plugins: PluginView[] }>(await get(boss, '').expect(200)).plugins;
      expect(approved.map((plugin) => plugin.name)).toEqual(['Grep secrets', 'Port_checker', 'Web scanner']);
      for (const plugin of approved) {
        expect(keysOf(plugin)).toEqual(ADMIN_KEYS);
        expect(plugin.reviewed_by_user_id).toBe(boss.id);
      }
      expect(names(await get(boss, '?status=pending').expect(200))).toEqual(['Pending one']);
      const rejected = data<{ plugins: PluginView[] }>(
        await get(boss, '?status=rejected').expect(200),
      ).plugins;
      expect(rejected.map((plugin) => [plugin.name, plugin.rejection_reason])).toEqual([
        ['Rejected one', 'Unsafe'],
      ]);
      expect(names(await get(boss, '?status=approved').expect(200))).toHaveLength(3);
    });

    it('403 `Admin privileges required` for users asking for pending or rejected plugins', async () => {
      for (const status of ['pending', 'rejected']) {
        for (const user of [alice, bob]) {
          expect((await get(user, `?status=${status}`).expect(403)).body).toEqual(forbidden);
        }
      }
      expect(names(await get(bob, '?status=approved').expect(200))).toHaveLength(3);
    });

    it('filters by group, type and a case-insensitive substring of name or description', async () => {
      expect(names(await get(bob, '?group=network').expect(200))).toEqual(['Port_checker']);
      expect(names(await get(bob, '?type=grep').expect(200))).toEqual(['Grep secrets']);
      expect(names(await get(bob, '?group=web&type=passive').expect(200))).toEqual([]);
      expect(names(await get(bob, '?q=web').expect(200))).toEqual(['Grep secrets', 'Web scanner']);
      expect(names(await get(bob, '?q=CHECKS').expect(200))).toEqual(['Port_checker']);
      // LIKE wildcards in q are literal characters.
      expect(names(await get(bob, `?q=${encodeURIComponent('100%')}`).expect(200))).toEqual(['Web scanner']);
      expect(names(await get(bob, '?q=t_c').expect(200))).toEqual(['Port_checker']);
      expect(names(await get(bob, '?q=%25').expect(200))).toEqual(['Web scanner']);
      expect(names(await get(bob, '?q=_').expect(200))).toEqual(['Port_checker']);
      expect(names(await get(bob, '?q=Refused').expect(200))).toEqual([]);
      expect(names(await get(boss, '?status=rejected&q=refused').expect(200))).toEqual(['Rejected one']);
    });

    it('pages with limit and offset; total counts every match', async () => {
      const page = data<{ total: number; limit: number; offset: number }>(
        await get(bob, '?limit=1&offset=1').expect(200),
      );
      expect(page).toMatchObject({ total: 3, limit: 1, offset: 1 });
      expect(names(await get(bob, '?limit=1&offset=1').expect(200))).toEqual(['Port_checker']);
      expect(names(await get(bob, '?limit=2&offset=2').expect(200))).toEqual(['Web scanner']);
      expect(names(await get(bob, '?offset=3').expect(200))).toEqual([]);
      // A page past the end still counts every match.
      expect(data<{ total: number }>(await get(bob, '?offset=3').expect(200)).total).toBe(3);
      expect(data<{ total: number }>(await get(bob, '?offset=99&q=_').expect(200)).total).toBe(1);
      expect(data<{ total: number }>(await get(bob, '?limit=1&q=_').expect(200)).total).toBe(1);
      expect(data<{ limit: number }>(await get(bob, '?limit=1000').expect(200)).limit).toBe(200);
    });

    it('400 `Invalid query parameters` with one message per bad parameter', async () => {
      const cases: Array<[string, Record<string, string>]> = [
        ['status=bogus', { status: 'must be one of pending, approved, rejected' }],
        ['group=Web', { group: 'must be one of web, network, auxiliary' }],
        ['type=x', { type: 'must be one of active, passive, semi_passive, external, grep' }],
        ['limit=0', { limit: 'must be an integer of at least 1' }],
        ['limit=ten', { limit: 'must be an integer of at least 1' }],
        ['offset=-1', { offset: 'must be an integer of at least 0' }],
        ['status=approved&status=pending', { status: 'must be given once' }],
        [`q=${'x'.repeat(201)}`, { q: 'must be at most 200 characters' }],
      ];
      for (const [query, errors] of cases) {
        expect((await get(bob, `?${query}`).expect(400)).body).toEqual(
          fail('Invalid query parameters', errors),
        );
      }
    });
  });

  describe('review: state machine', () => {
    it('pending -> approved -> rejected -> approved, recording reviewer and time, clearing the reason on approval', async () => {
      const plugin = await uploaded(alice, 'Stateful');
      t.clock.advance(60_000);
      const approvedAt = t.clock.now();
      const approved = await approve(boss, plugin.id).expect(200);
      expect(keysOf(data(approved))).toEqual(ADMIN_KEYS);
      expect(data(approved)).toEqual({
        ...plugin,
        status: 'approved',
        approval_status: 'approved',
        file_missing: false,
        file_altered: false,
        pending_version: null,
        recheck_findings: null,
        recheck_rules_version: null,
        reviewed_by_user_id: boss.id,
        reviewed_at: expect.any(String),
        execution_timeout: 300,
      });
      const approvedView = data(approved);
      expect(Math.abs(Date.parse(approvedView.reviewed_at as string) - approvedAt.getTime())).toBeLessThan(
        5000,
      );
      // The review time is the admins'; updated_at, shown to everyone, stays the upload's.
      expect(approvedView.updated_at).toBe(plugin.updated_at);
      expect(
        Date.parse(approvedView.reviewed_at as string) - Date.parse(plugin.created_at as string),
      ).toBeGreaterThanOrEqual(59_000);

      expect((await approve(boss, plugin.id).expect(409)).body).toEqual(fail('Plugin is already approved'));

      const otherAdmin = await signUpAs(t, smtp, 'overseer');
      await t.dataSource.query('UPDATE users SET is_admin = 1 WHERE id = ?', [otherAdmin.id]);
      t.clock.advance(60_000);
      const rejected = data(
        await post(otherAdmin, `${plugin.id}/reject/`).send({ reason: '  Phones home  ' }).expect(200),
      );
      expect(rejected).toMatchObject({
        status: 'rejected',
        approval_status: 'rejected',
        rejection_reason: 'Phones home',
        reviewed_by_user_id: otherAdmin.id,
      });
      expect(Date.parse(rejected.reviewed_at as string)).toBeGreaterThan(
        Date.parse(approvedView.reviewed_at as string),
      );

      expect((await post(boss, `${plugin.id}/reject/`).send({ reason: 'again' }).expect(409)).body).toEqual(
        fail('Plugin is already rejected'),
      );

      const reapproved = data(await approve(boss, plugin.id).expect(200));
      expect(reapproved).toMatchObject({
        status: 'approved',
        rejection_reason: null,
        reviewed_by_user_id: boss.id,
      });
      const [row] = (await t.dataSource.query(
        'SELECT status, rejection_reason, reviewed_by_user_id FROM user_plugins WHERE id = ?',
        [plugin.id],
      )) as Array<Record<string, unknown>>;
      expect({ ...row, reviewed_by_user_id: Number(row.reviewed_by_user_id) }).toEqual({
        status: 'approved',
        rejection_reason: null,
        reviewed_by_user_id: boss.id,
      });
    });

    it('pending -> rejected -> approved', async () => {
      const plugin = await uploaded(alice, 'Rejected first');
      expect(
        data(await post(boss, `${plugin.id}/reject/`).send({ reason: 'Fix it' }).expect(200)).status,
      ).toBe('rejected');
      expect(data(await approve(boss, plugin.id).expect(200)).status).toBe('approved');
    });

    it('lets only one of two racing approvals through', async () => {
      const plugin = await uploaded(alice, 'Raced approval');
      const responses = await Promise.all([approve(boss, plugin.id), approve(boss, plugin.id)]);
      expect(responses.map((response) => response.status).sort()).toEqual([200, 409]);
    });

    it('reads the reason from JSON, urlencoded and multipart bodies and from the query string', async () => {
      const reasons: Array<[string, (id: number) => Promise<Response>]> = [
        ['json', (id) => post(boss, `${id}/reject/`).send({ reason: 'json' })],
        ['form', (id) => post(boss, `${id}/reject/`).type('form').send({ reason: 'form' })],
        ['multipart', (id) => post(boss, `${id}/reject/`).field('reason', 'multipart')],
        ['query', (id) => post(boss, `${id}/reject/?reason=query`)],
      ];
      for (const [reason, send] of reasons) {
        const plugin = await uploaded(alice, `Reason ${reason}`);
        expect(data(await send(plugin.id)).rejection_reason).toBe(reason);
      }
    });

    it('400 for a missing, blank, too long or control-character reason; 2000 characters is fine', async () => {
      const plugin = await uploaded(alice, 'Reasons checked');
      const cases: Array<[unknown, string]> = [
        [{}, 'Missing rejection reason'],
        [{ reason: '' }, 'Missing rejection reason'],
        [{ reason: '   ' }, 'Missing rejection reason'],
        [{ reason: 42 }, 'Missing rejection reason'],
        [{ reason: 'r'.repeat(2001) }, 'Rejection reason must be at most 2000 characters'],
        [{ reason: 'bell\u0007' }, 'Rejection reason must not contain control characters'],
      ];
      for (const [body, message] of cases) {
        expect(
          (
            await post(boss, `${plugin.id}/reject/`)
              .send(body as object)
              .expect(400)
          ).body,
        ).toEqual(fail(message));
      }
      expect(data(await get(boss, `${plugin.id}/`).expect(200)).status).toBe('pending');
      const long = `line one\n${'r'.repeat(1991)}`;
      expect(
        data(await post(boss, `${plugin.id}/reject/`).send({ reason: long }).expect(200)).rejection_reason,
      ).toBe(long);
    });
  });

  describe('GET <id>/source/', () => {
    it('gives admins {id, name, version, sha256, source_code} read from the file', async () => {
      const source = benignPlugin('Source me');
      const response = await upload(t, alice.token, { fields: validFields('Source me'), file: source });
      const plugin = data(response);
      expect((await get(boss, `${plugin.id}/source/`).expect(200)).body).toEqual({
        status: 'success',
        data: {
          id: plugin.id,
          name: 'Source me',
          version: '1.0.0',
          sha256: createHash('sha256').update(source).digest('hex'),
          source_code: source.toString('utf8'),
        },
      });
    });

    it('409 `Plugin file was modified on disk` when the file no longer matches its hash, and logs it', async () => {
      const warnings = jest.spyOn(Logger.prototype, 'warn');
      const plugin = await uploaded(alice, 'Tampered');
      const [row] = (await t.dataSource.query('SELECT file_path FROM user_plugins WHERE id = ?', [
        plugin.id,
      ])) as Array<{
        file_path: string;
      }>;
      const path = join(t.config.communityPluginDir, row.file_path);
      writeFileSync(path, 'import os\n');
      expect((await get(boss, `${plugin.id}/source/`).expect(409)).body).toEqual(
        fail('Plugin file was modified on disk'),
      );
      expect(warnings).toHaveBeenCalledWith(
        expect.stringContaining(`Plugin ${plugin.id} (Tampered): file hash`),
      );
    });

    it('410 `Plugin file is missing` when the file is gone: the plugin shows as broken, is not approved, and can be deleted', async () => {
      const errors = jest.spyOn(Logger.prototype, 'error');
      const plugin = await uploaded(alice, 'Vanished');
      const [row] = (await t.dataSource.query('SELECT file_path FROM user_plugins WHERE id = ?', [
        plugin.id,
      ])) as Array<{ file_path: string }>;
      unlinkSync(join(t.config.communityPluginDir, row.file_path));
      expect((await get(boss, `${plugin.id}/source/`).expect(410)).body).toEqual(
        fail('Plugin file is missing'),
      );
      expect(errors).toHaveBeenCalledWith(
        expect.stringContaining(`Plugin ${plugin.id} (Vanished): its file ${row.file_path} is missing`),
      );
      const detail = await get(boss, `${plugin.id}/`).expect(200);
      expect((detail.body as { data: { file_missing: boolean } }).data.file_missing).toBe(true);
      expect((await approve(boss, plugin.id).expect(409)).body).toEqual(fail('Plugin file is missing'));
      await del(boss, `${plugin.id}/delete/`).expect(200);
      await uploaded(alice, 'Vanished');
    });

    it('refuses to approve a plugin whose file is gone, marking it broken on the way', async () => {
      const plugin = await uploaded(alice, 'Gone before approval');
      const [row] = (await t.dataSource.query('SELECT file_path FROM user_plugins WHERE id = ?', [
        plugin.id,
      ])) as Array<{ file_path: string }>;
      unlinkSync(join(t.config.communityPluginDir, row.file_path));
      expect((await approve(boss, plugin.id).expect(409)).body).toEqual(fail('Plugin file is missing'));
      const detail = data(await get(boss, `${plugin.id}/`).expect(200));
      expect([detail.status, detail.file_missing]).toEqual(['pending', true]);
    });
  });

  describe('DELETE <id>/delete/', () => {
    it('removes the row and the file', async () => {
      const plugin = await uploaded(alice, 'Doomed');
      const [row] = (await t.dataSource.query('SELECT file_path FROM user_plugins WHERE id = ?', [
        plugin.id,
      ])) as Array<{
        file_path: string;
      }>;
      const path = join(t.config.communityPluginDir, row.file_path);
      expect(existsSync(path)).toBe(true);
      expect((await del(boss, `${plugin.id}/delete/`).expect(200)).body).toEqual({
        status: 'success',
        data: null,
      });
      expect(existsSync(path)).toBe(false);
      expect(await t.dataSource.query('SELECT id FROM user_plugins WHERE id = ?', [plugin.id])).toEqual([]);
      expect((await get(boss, `${plugin.id}/`).expect(404)).body).toEqual(notFound);
      expect((await del(boss, `${plugin.id}/delete/`).expect(404)).body).toEqual(notFound);
    });

    it('logs a file that is already missing instead of failing', async () => {
      const warnings = jest.spyOn(Logger.prototype, 'warn');
      const plugin = await uploaded(alice, 'Already gone');
      const [row] = (await t.dataSource.query('SELECT file_path FROM user_plugins WHERE id = ?', [
        plugin.id,
      ])) as Array<{
        file_path: string;
      }>;
      unlinkSync(join(t.config.communityPluginDir, row.file_path));
      expect((await del(boss, `${plugin.id}/delete/`).expect(200)).body).toEqual({
        status: 'success',
        data: null,
      });
      expect(warnings).toHaveBeenCalledWith(`Plugin file ${row.file_path} was already missing`);
      expect(await t.dataSource.query('SELECT id FROM user_plugins WHERE id = ?', [plugin.id])).toEqual([]);
    });
  });

  describe('GET <id>/review-history/', () => {
    it('is built from the row: the upload, then the latest review with its reason when rejected', async () => {
      const plugin = await uploaded(alice, 'Historic');
      expect((await get(boss, `${plugin.id}/review-history/`).expect(200)).body).toEqual({
        status: 'success',
        data: {
          plugin_id: plugin.id,
          events: [{ event: 'uploaded', at: plugin.created_at, user_id: alice.id }],
        },
      });
      t.clock.advance(5000);
      const rejected = data(
        await post(boss, `${plugin.id}/reject/`).send({ reason: 'Needs work' }).expect(200),
      );
      expect(data(await get(boss, `${plugin.id}/review-history/`).expect(200))).toEqual({
        plugin_id: plugin.id,
        events: [
          { event: 'uploaded', at: plugin.created_at, user_id: alice.id },
          { event: 'rejected', at: rejected.reviewed_at, user_id: boss.id, reason: 'Needs work' },
        ],
      });
      t.clock.advance(5000);
      const approved = data(await approve(boss, plugin.id).expect(200));
      expect(data(await get(boss, `${plugin.id}/review-history/`).expect(200))).toEqual({
        plugin_id: plugin.id,
        events: [
          { event: 'uploaded', at: plugin.created_at, user_id: alice.id },
          { event: 'approved', at: approved.reviewed_at, user_id: boss.id },
        ],
      });
    });
  });

  describe('no response of any endpoint carries file_path or source_code', () => {
    it('walks every endpoint as a user, the uploader and an admin, successes and failures alike', async () => {
      const bodies: Array<{ route: string; body: unknown }> = [];
      const record = async (route: string, call: () => Promise<Response>) => {
        const response = await call();
        bodies.push({ route, body: response.body });
        return response;
      };

      const source = benignPlugin('Leak check');
      const created = await record('upload', () =>
        upload(t, alice.token, {
          fields: validFields('Leak check'),
          file: source,
          filename: 'leak_check.py',
        }),
      );
      const id = data(created).id;
      await record('upload refused', () =>
        upload(t, alice.token, { fields: validFields('Leak check'), file: source }),
      );
      await record('upload invalid', () =>
        upload(t, alice.token, { fields: validFields('x'), file: source }),
      );
      const [row] = (await t.dataSource.query('SELECT file_path FROM user_plugins WHERE id = ?', [
        id,
      ])) as Array<{ file_path: string }>;
      expect(row.file_path).toMatch(/^leak_check_[0-9a-f]{16}\.py$/);

      const walk = async () => {
        for (const user of [bob, alice, boss]) {
          const who = user.username;
          await record(`${who} list`, () => get(user, ''));
          await record(`${who} list pending`, () => get(user, '?status=pending'));
          await record(`${who} list rejected`, () => get(user, '?status=rejected'));
          await record(`${who} detail`, () => get(user, `${id}/`));
          await record(`${who} mine`, () => get(user, 'mine/'));
          await record(`${who} me`, () => get(user, 'me/'));
          await record(`${who} history`, () => get(user, `${id}/review-history/`));
          await record(`${who} source`, () => get(user, `${id}/source/`));
        }
      };
      await walk();
      await record('bob reject', () => post(bob, `${id}/reject/`).send({ reason: 'x' }));
      await record('boss reject', () => post(boss, `${id}/reject/`).send({ reason: 'Leaky' }));
      await walk();
      await record('bob approve', () => post(bob, `${id}/approve/`));
      await record('boss approve', () => post(boss, `${id}/approve/`));
      await record('boss approve again', () => post(boss, `${id}/approve/`));
      await walk();
      await record('bob delete', () => del(bob, `${id}/delete/`));
      await record('boss delete', () => del(boss, `${id}/delete/`));
      await walk();

      expect(bodies.length).toBeGreaterThan(100);
      const sourceResponses = bodies.filter(({ route }) => route === 'boss source');
      expect(
        sourceResponses.map(({ body }) => (body as { data?: { source_code?: string } }).data?.source_code),
      ).toEqual([source.toString('utf8'), source.toString('utf8'), source.toString('utf8'), undefined]);
      for (const { route, body } of bodies) {
        const text = JSON.stringify(body);
        expect({ route, leaks: forbiddenKeys(body, route === 'boss source') }).toEqual({ route, leaks: [] });
        expect({
          route,
          path: text.includes(row.file_path) || text.includes(t.config.communityPluginDir),
        }).toEqual({
          route,
          path: false,
        });
      }
    });
  });
});

/** Every key anywhere in the body that names the file path or the source. */
function forbiddenKeys(value: unknown, sourceAllowed: boolean, path = ''): string[] {
  if (Array.isArray(value))
    return value.flatMap((item, index) => forbiddenKeys(item, sourceAllowed, `${path}[${index}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, item]) => {
    const here = `${path}.${key}`;
    const named = /file_?path|source_?code/i.test(key) && !(sourceAllowed && here === '.data.source_code');
    return [...(named ? [here] : []), ...forbiddenKeys(item, sourceAllowed, here)];
  });
}
