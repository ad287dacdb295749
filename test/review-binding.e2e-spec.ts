import { createHash } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { fail } from './helpers/envelopes';
import {
  benignPlugin,
  svcAdminOn as svcAdmin,
  marketplaceApp,
  readThenApprove,
  SignedInUser,
  signUpAs,
  upload,
  validFields,
} from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';

type Row = Record<string, unknown>;
const sha = (content: Buffer) => createHash('sha256').update(content).digest('hex');
const dataOf = <T = Row>(response: { body: unknown }) => (response.body as { data: T }).data;

jest.setTimeout(180_000);

/** Reviewers' calls on one app. */
function client(t: TestApp) {
  const api = (path: string) => `/api/v1/community-plugins/${path}`;
  const as = (user: SignedInUser) => ({
    get: (path: string) => t.http().get(api(path)).set('Authorization', `Bearer ${user.token}`),
    post: (path: string) => t.http().post(api(path)).set('Authorization', `Bearer ${user.token}`),
  });
  return {
    as,
    source: (user: SignedInUser, id: unknown, query = '') => as(user).get(`${String(id)}/source/${query}`),
    approve: (user: SignedInUser, id: unknown, body?: Record<string, string>) => {
      const call = as(user).post(`${String(id)}/approve/`);
      return body ? call.send(body) : call;
    },
    reject: (user: SignedInUser, id: unknown, reason: string, body: Record<string, string> = {}) =>
      as(user)
        .post(`${String(id)}/reject/`)
        .send({ reason, ...body }),
    async uploaded(user: SignedInUser, name: string, file: Buffer): Promise<number> {
      const response = await upload(t, user.token, { fields: validFields(name), file });
      expect(response.status).toBe(201);
      return dataOf<{ id: number }>(response).id;
    },
    newVersion(user: SignedInUser, id: unknown, version: string, file: Buffer) {
      return t
        .http()
        .post(api(`${String(id)}/versions/`))
        .set('Authorization', `Bearer ${user.token}`)
        .field('version', version)
        .attach('plugin_file', file, { filename: 'update.py', contentType: 'text/x-python' });
    },
  };
}

const readFirstText = (version: string) => `Read the source of version ${version} before approving`;
const readFirst = (version: string) => fail(readFirstText(version));
/** 200, or the message of a refusal. */
const answered = (response: { status: number; body: unknown }) =>
  response.status === 200 ? 200 : (response.body as { message: string }).message;

describe('an admin approves exactly what the admin read', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let boss: SignedInUser;
  let chief: SignedInUser;
  let c: ReturnType<typeof client>;

  beforeAll(async () => {
    await smtp.start();
    ({
      t,
      users: { alice, boss, chief },
    } = await marketplaceApp(smtp, ['alice', 'boss', 'chief']));
    c = client(t);
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  /** A plugin approved at 1.0.0 with 1.1.0 waiting; the bytes of each. */
  async function withUpdateWaiting(name: string) {
    const v1 = benignPlugin(`${name} 1.0.0`);
    const v11 = benignPlugin(`${name} 1.1.0`);
    const id = await c.uploaded(alice, name, v1);
    await readThenApprove(t, boss.token, id).expect(200);
    await c.newVersion(alice, id, '1.1.0', v11).expect(201);
    return { id, v1, v11 };
  }

  describe('GET <id>/source/', () => {
    it('shows the version approve would act on and names it; ?version= shows any other; an unknown one is 404', async () => {
      const { id, v1, v11 } = await withUpdateWaiting('Shown waiting');
      const waiting = dataOf(await c.source(chief, id).expect(200));
      expect(waiting).toEqual({
        id,
        name: 'Shown waiting',
        version: '1.1.0',
        sha256: sha(v11),
        source_code: v11.toString('utf8'),
      });
      expect(dataOf(await c.source(chief, id, '?version=1.0.0').expect(200))).toEqual({
        id,
        name: 'Shown waiting',
        version: '1.0.0',
        sha256: sha(v1),
        source_code: v1.toString('utf8'),
      });
      expect((await c.source(chief, id, '?version=9.9.9').expect(404)).body).toEqual(
        fail('Version not found'),
      );
      // Once decided, the approved version served is what the source shows.
      await c.approve(chief, id).expect(200);
      expect(dataOf(await c.source(chief, id).expect(200))).toMatchObject({
        version: '1.1.0',
        sha256: sha(v11),
      });
    });
  });

  describe('approve is bound to the version read', () => {
    it('a body-less approve without a read is refused, letter for letter; reading another version is no read of this one', async () => {
      const { id } = await withUpdateWaiting('Unread update');
      expect((await c.approve(chief, id).expect(409)).body).toEqual(readFirst('1.1.0'));
      await c.source(chief, id, '?version=1.0.0').expect(200);
      expect((await c.approve(chief, id).expect(409)).body).toEqual(readFirst('1.1.0'));
      // Boss read 1.1.0 (withUpdateWaiting did not: it read 1.0.0); chief's read is chief's own.
      await c.source(boss, id).expect(200);
      expect((await c.approve(chief, id).expect(409)).body).toEqual(readFirst('1.1.0'));
      expect(dataOf(await c.approve(boss, id).expect(200))).toMatchObject({
        status: 'approved',
        version: '1.1.0',
        pending_version: null,
      });
    });

    it('the diff of the version counts as its read', async () => {
      const { id } = await withUpdateWaiting('Diffed update');
      await c.as(chief).get(`${id}/versions/1.1.0/diff/`).expect(200);
      expect(dataOf(await c.approve(chief, id).expect(200))).toMatchObject({ version: '1.1.0' });
    });

    it('a late approve naming the version read is refused when another version waits; so is a late reject', async () => {
      const { id, v11 } = await withUpdateWaiting('Late approval');
      // Chief reads 1.1.0's diff; boss approves 1.1.0 meanwhile and alice uploads 2.0.0.
      await c.as(chief).get(`${id}/versions/1.1.0/diff/`).expect(200);
      await readThenApprove(t, boss.token, id).expect(200);
      const v2 = benignPlugin('Late approval 2.0.0');
      await c.newVersion(alice, id, '2.0.0', v2).expect(201);

      expect((await c.approve(chief, id, { version: '1.1.0' }).expect(409)).body).toEqual(
        fail('Version 2.0.0 is waiting for review, not 1.1.0'),
      );
      expect((await c.approve(chief, id, { sha256: sha(v11) }).expect(409)).body).toEqual(
        fail(`Version 2.0.0 is waiting for review, not sha256 ${sha(v11)}`),
      );
      expect((await c.reject(chief, id, 'Too slow', { version: '1.1.0' }).expect(409)).body).toEqual(
        fail('Version 2.0.0 is waiting for review, not 1.1.0'),
      );
      // Body-less: chief read 1.1.0, not 2.0.0.
      expect((await c.approve(chief, id).expect(409)).body).toEqual(readFirst('2.0.0'));
      expect((await c.approve(chief, id, { version: '2.0.0', sha256: 'ab' }).expect(400)).body).toEqual(
        fail('Invalid request arguments', { sha256: 'must be 64 lower-case hexadecimal digits' }),
      );
      const row = dataOf(await c.as(chief).get(`${id}/`).expect(200));
      expect(row).toMatchObject({ status: 'approved', version: '1.1.0', pending_version: '2.0.0' });

      await c.source(chief, id).expect(200);
      expect(
        dataOf(await c.approve(chief, id, { version: '2.0.0', sha256: sha(v2) }).expect(200)),
      ).toMatchObject({ status: 'approved', version: '2.0.0', sha256: sha(v2), pending_version: null });
    });

    it('a read from before a rejection approves nothing: the rejection and its reason stand', async () => {
      const file = benignPlugin('Rejected while read');
      const id = await c.uploaded(alice, 'Rejected while read', file);
      await c.source(chief, id).expect(200);
      await c.reject(boss, id, 'Phones home').expect(200);
      expect((await c.approve(chief, id).expect(409)).body).toEqual(readFirst('1.0.0'));
      expect((await c.approve(chief, id, { version: '1.0.0' }).expect(409)).body).toEqual(readFirst('1.0.0'));
      const versions = dataOf<{ versions: Row[] }>(await c.as(chief).get(`${id}/versions/`).expect(200));
      expect(versions.versions[0]).toMatchObject({ status: 'rejected', rejection_reason: 'Phones home' });
      // Read again, after the rejection: a deliberate re-approval.
      await c.source(chief, id).expect(200);
      expect(dataOf(await c.approve(chief, id).expect(200))).toMatchObject({ status: 'approved' });
    });

    it('two admins deciding at once: a rejection is never undone by an approval sent with it', async () => {
      for (let round = 0; round < 6; round += 1) {
        const name = `Decided at once ${round}`;
        const id = await c.uploaded(alice, name, benignPlugin(name));
        await c.source(boss, id).expect(200);
        await c.source(chief, id).expect(200);
        const [rejected, approved] = await Promise.all([
          c.reject(boss, id, `No ${round}`, { version: '1.0.0' }),
          c.approve(chief, id),
        ]);
        const entries = dataOf<{ entries: Array<{ action: string }> }>(
          await t
            .http()
            .get(`/api/v1/audit/?subject=plugin:${id}`)
            .set('Authorization', `Bearer ${boss.token}`)
            .expect(200),
        ).entries.reverse();
        const [plugin] = (await t.dataSource.query(
          'SELECT p.status AS status, v.rejection_reason AS reason FROM user_plugins p JOIN plugin_versions v ON v.plugin_id = p.id WHERE p.id = ?',
          [id],
        )) as Row[];
        const outcome = {
          reject: answered(rejected),
          approve: answered(approved),
          // Oldest first: an approval after the rejection would be the late approve undoing it.
          decisions: entries.filter((entry) => entry.action !== 'upload').map((entry) => entry.action),
          plugin,
        };
        const rejectedState = { status: 'rejected', reason: `No ${round}` };
        const changed = 'The version waiting for review changed; look again';
        expect([
          { reject: 200, approve: readFirstText('1.0.0'), decisions: ['reject'], plugin: rejectedState },
          { reject: 200, approve: changed, decisions: ['reject'], plugin: rejectedState },
          // The approval first; the rejection, sent for 1.0.0, revokes it.
          { reject: 200, approve: 200, decisions: ['approve', 'reject'], plugin: rejectedState },
          {
            reject: changed,
            approve: 200,
            decisions: ['approve'],
            plugin: { status: 'approved', reason: null },
          },
        ]).toContainEqual(outcome);
      }
    });

    it('two admins approving the version they read at once: one approval, one outcome', async () => {
      for (let round = 0; round < 4; round += 1) {
        const { id, v11 } = await withUpdateWaiting(`Approved at once ${round}`);
        await c.source(boss, id).expect(200);
        await c.source(chief, id).expect(200);
        const answers = await Promise.all([
          c.approve(boss, id, { version: '1.1.0', sha256: sha(v11) }),
          c.approve(chief, id, { version: '1.1.0' }),
        ]);
        expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
        const refused = answers.find((answer) => answer.status === 409);
        expect([
          fail('Plugin is already approved'),
          fail('The version waiting for review changed; look again'),
        ]).toContainEqual(refused?.body);
      }
    });
  });

  describe('reinstating a revoked plugin', () => {
    it('approves the revoked version, never the newer update an admin rejected, whose reason stays', async () => {
      const { id, v1 } = await withUpdateWaiting('Revoked then reinstated');
      await c.reject(chief, id, 'Leaks tokens', { version: '1.1.0' }).expect(200);
      expect(dataOf(await c.reject(chief, id, 'Revoked for audit').expect(200))).toMatchObject({
        status: 'rejected',
        version: '1.0.0',
      });
      // The source shows what approve acts on: the revoked 1.0.0.
      expect(dataOf(await c.source(boss, id).expect(200))).toMatchObject({
        version: '1.0.0',
        sha256: sha(v1),
      });
      expect((await c.approve(boss, id, { version: '1.1.0' }).expect(409)).body).toEqual(
        fail('Version 1.0.0 is the version to approve, not 1.1.0'),
      );
      expect(dataOf(await c.approve(boss, id).expect(200))).toMatchObject({
        status: 'approved',
        version: '1.0.0',
        sha256: sha(v1),
        rejection_reason: null,
        pending_version: null,
      });
      const versions = dataOf<{ versions: Row[] }>(
        await c.as(boss).get(`${id}/versions/`).expect(200),
      ).versions;
      expect(versions.map((row) => [row.version, row.status, row.rejection_reason])).toEqual([
        ['1.1.0', 'rejected', 'Leaks tokens'],
        ['1.0.0', 'approved', null],
      ]);
      const manifest = dataOf<{ plugins: Row[] }>(await c.as(alice).get('manifest/').expect(200));
      expect(manifest.plugins.find((entry) => entry.id === id)).toMatchObject({
        version: '1.0.0',
        sha256: sha(v1),
      });
    });
  });
});

describe('the quorum counts admins in service', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let c: ReturnType<typeof client>;
  let author: SignedInUser;
  let boss: SignedInUser;
  let chief: SignedInUser;

  beforeAll(async () => {
    await smtp.start();
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    t = await createTestApp({
      smtp,
      env: {
        SVC_ADMIN_EMAILS: 'boss@example.com,chief@example.com',
        PLUGIN_APPROVALS_REQUIRED: '2',
        PLUGIN_MAX_PENDING_PER_USER: '1000',
      },
    });
    warn.mockRestore();
    c = client(t);
    author = await signUpAs(t, smtp, 'author');
    boss = await signUpAs(t, smtp, 'boss');
    chief = await signUpAs(t, smtp, 'chief');
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  /** An admin by the flag, as svc-admin promote leaves one (signed in after the change). */
  async function flagAdmin(name: string): Promise<SignedInUser> {
    const user = await signUpAs(t, smtp, name);
    await t.dataSource.query('UPDATE users SET is_admin = 1 WHERE id = ?', [user.id]);
    return user;
  }

  const approvalsOf = async (id: number) =>
    (
      (await t.dataSource.query(
        'SELECT a.user_id AS user_id FROM plugin_version_approvals a JOIN plugin_versions v ON v.id = a.version_id WHERE v.plugin_id = ? ORDER BY a.id',
        [id],
      )) as Row[]
    ).map((row) => Number(row.user_id));

  it('svc-admin demote and deactivate drop the pending approvals, each with an audit entry; the chain stays intact', async () => {
    const former = await flagAdmin('former');
    const leaver = await flagAdmin('leaver');
    const first = await c.uploaded(author, 'Approved by a former admin', benignPlugin('former'));
    const second = await c.uploaded(author, 'Approved by a leaver', benignPlugin('leaver'));
    expect(dataOf(await readThenApprove(t, former.token, first).expect(200))).toMatchObject({
      status: 'pending',
    });
    expect(dataOf(await readThenApprove(t, leaver.token, second).expect(200))).toMatchObject({
      status: 'pending',
    });

    expect(await svcAdmin(t, ['demote', former.email])).toEqual({
      code: 0,
      stdout:
        `Demoted ${former.email}; its tokens were revoked, so it logs in again\n` +
        `Dropped 1 approval(s) of ${former.email} from versions waiting for review\n`,
      stderr: '',
    });
    expect(await svcAdmin(t, ['deactivate', leaver.email])).toEqual({
      code: 0,
      stdout: `Deactivated ${leaver.email}\nDropped 1 approval(s) of ${leaver.email} from versions waiting for review\n`,
      stderr: '',
    });
    expect(await approvalsOf(first)).toEqual([]);
    expect(await approvalsOf(second)).toEqual([]);
    const dropped = dataOf<{ entries: Array<{ actor: string; subject: string; details: Row }> }>(
      await t
        .http()
        .get('/api/v1/audit/?action=approval_dropped')
        .set('Authorization', `Bearer ${boss.token}`)
        .expect(200),
    ).entries;
    expect(dropped.map(({ actor, subject, details }) => ({ actor, subject, details }))).toEqual([
      {
        actor: 'svc-admin',
        subject: `plugin:${second}`,
        details: {
          version: '1.0.0',
          sha256: sha(benignPlugin('leaver')),
          user_id: leaver.id,
          because: 'deactivate',
        },
      },
      {
        actor: 'svc-admin',
        subject: `plugin:${first}`,
        details: {
          version: '1.0.0',
          sha256: sha(benignPlugin('former')),
          user_id: former.id,
          because: 'demote',
        },
      },
    ]);

    // One approval after the drop is one of two.
    expect(dataOf(await readThenApprove(t, boss.token, first).expect(200))).toMatchObject({
      status: 'pending',
    });
    expect(dataOf(await readThenApprove(t, chief.token, first).expect(200))).toMatchObject({
      status: 'approved',
    });
    const verified = await svcAdmin(t, ['audit', 'verify']);
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/^\d+ entries, chain intact\n$/);
  });

  it('an approval by someone no longer an admin in service does not count, however the role was lost', async () => {
    const demoted = await flagAdmin('demoted');
    const gone = await flagAdmin('gone');
    const first = await c.uploaded(author, 'Counted without the demoted', benignPlugin('demoted'));
    const second = await c.uploaded(author, 'Counted without the gone', benignPlugin('gone'));
    await readThenApprove(t, demoted.token, first).expect(200);
    await readThenApprove(t, gone.token, second).expect(200);
    // The role lost behind svc-admin's back (the row edited): the approvals stay, and count for nothing.
    await t.dataSource.query('UPDATE users SET is_admin = 0 WHERE id = ?', [demoted.id]);
    await t.dataSource.query('UPDATE users SET deactivated_at = created_at WHERE id = ?', [gone.id]);
    for (const id of [first, second]) {
      expect(dataOf(await readThenApprove(t, boss.token, id).expect(200))).toMatchObject({
        status: 'pending',
        pending_version: '1.0.0',
      });
      const [entry] = dataOf<{ entries: Array<{ details: Row }> }>(
        await t
          .http()
          .get(`/api/v1/audit/?action=approve&subject=plugin:${id}&limit=1`)
          .set('Authorization', `Bearer ${boss.token}`)
          .expect(200),
      ).entries;
      expect(entry.details).toMatchObject({ approvals: 1, required: 2, approved: false });
      expect(dataOf(await readThenApprove(t, chief.token, id).expect(200))).toMatchObject({
        status: 'approved',
        reviewed_by_user_id: chief.id,
      });
    }
  });

  it('a demotion racing the deciding approval: approved with the approval counted, or pending with it dropped', async () => {
    for (let round = 0; round < 3; round += 1) {
      const racer = await flagAdmin(`racer${round}`);
      const id = await c.uploaded(author, `Raced demotion ${round}`, benignPlugin(`raced ${round}`));
      await readThenApprove(t, racer.token, id).expect(200);
      await c.source(boss, id).expect(200);
      const [demoted, approved] = await Promise.all([
        svcAdmin(t, ['demote', racer.email]),
        c.approve(boss, id),
      ]);
      expect([demoted.code, approved.status]).toEqual([0, 200]);
      const entries = dataOf<{ entries: Array<{ action: string; subject: string; details: Row }> }>(
        await t.http().get('/api/v1/audit/?limit=4').set('Authorization', `Bearer ${boss.token}`).expect(200),
      )
        .entries.reverse()
        .map(({ action, subject, details }) => [
          action,
          subject,
          details.approved ?? details.user_id ?? null,
        ]);
      const status = dataOf<{ status: string }>(approved).status;
      const demotion = ['demote', `user:${racer.id}`, null];
      const dropped = ['approval_dropped', `plugin:${id}`, racer.id];
      // Oldest first, after the racer's approval and the reads.
      expect({ status, entries: entries.slice(-3), approvals: await approvalsOf(id) }).toEqual(
        status === 'approved'
          ? {
              status,
              entries: [['approve', `plugin:${id}`, false], ['approve', `plugin:${id}`, true], demotion],
              approvals: [racer.id, boss.id],
            }
          : {
              status,
              entries: [demotion, dropped, ['approve', `plugin:${id}`, false]],
              approvals: [boss.id],
            },
      );
    }
    const verified = await svcAdmin(t, ['audit', 'verify']);
    expect(verified.code).toBe(0);
  });
});
