import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { login, register, setPasswordByOtp, STRONG_PASSWORD } from './helpers/accounts';
import { SmtpSink } from './helpers/smtp-sink';
import { runSvcAdmin, type CliResult } from './helpers/svc-admin';
import { createTestApp, TestApp, TEST_JWT_SECRET } from './helpers/test-app';
import { databaseUrlOf, SignedInUser, signUpAs } from './helpers/marketplace';
import { bootApp } from './helpers/test-app';
import { accountFail } from './helpers/envelopes';

// Each svc-admin run is a Node process that loads Nest and opens the database: about 2 s.
jest.setTimeout(120_000);

/** svc-admin on the test app's database, with a plugin directory of its own unless `env` names one. */
function svcAdmin(databaseUrl: string, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runSvcAdmin(args, {
    DATABASE_URL: databaseUrl,
    JWT_SECRET: TEST_JWT_SECRET,
    COMMUNITY_PLUGIN_DIR: join(mkdtempSync(join(tmpdir(), 'svc-cli-')), 'plugins'),
    ...env,
  });
}

const isAdminInDatabase = async (t: TestApp, email: string): Promise<boolean> => {
  const [row] = (await t.dataSource.query('SELECT is_admin FROM users WHERE email = ?', [email])) as Array<{
    is_admin: unknown;
  }>;
  return Boolean(Number(row.is_admin));
};

interface AuditRow {
  seq: number;
  actor: string;
  action: string;
  subject: string;
  details: Record<string, unknown>;
}

/** The audit log in chain order, as the columns a test compares. */
async function auditRows(t: TestApp): Promise<AuditRow[]> {
  const rows = (await t.dataSource.query(
    'SELECT seq, actor, action, subject, details FROM audit_log ORDER BY seq',
  )) as Array<{ seq: unknown; actor: string; action: string; subject: string; details: string }>;
  return rows.map((row) => ({
    seq: Number(row.seq),
    actor: row.actor,
    action: row.action,
    subject: row.subject,
    details: JSON.parse(row.details) as Record<string, unknown>,
  }));
}

/** The entries that grant or take the admin role, without their place in the chain. */
const roleChanges = async (t: TestApp) =>
  (await auditRows(t))
    .filter((row) => row.action === 'promote' || row.action === 'demote')
    .map(({ seq: _seq, ...row }) => row);

/** svc-admin in a working directory of its own, with no setting but PATH and `env`. */
function svcAdminIn(cwd: string, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runSvcAdmin(args, env, cwd);
}

const USAGE = `Usage: svc-admin [options] [command]

Options:
  -h, --help          display help for command

Commands:
  promote <email>     Make the user with this email an admin
  demote <email>      Take admin rights from the user with this email
  deactivate <email>  Take the account out of service: login refused, every
                      token revoked
  activate <email>    Put a deactivated account back in service
  list                List the admins, one per line: id, email and name,
                      tab-separated
  plugins             Plugin files: verify, test-run
  audit               The audit log: verify
  second-factor       Second factors (TOTP): reset
  backup <dir>        Back up the database, plugin files and secrets into <dir>
  restore <dir>       Restore a backup into an empty database and plugin dir
  help [command]      display help for command
`;

const whereHelp = (database: string, pluginDir: string) => `
Database: ${database}
Plugin files: ${pluginDir}

Relative paths are from the working directory. To act on another database, set DATABASE_URL
(sqlite:<path> or mysql://user:pass@host:3306/db) and COMMUNITY_PLUGIN_DIR as the API has them,
in the environment or in .env in the working directory, e.g.
  DATABASE_URL=sqlite:/srv/svc/svc.sqlite npx svc-admin list
`;

describe('svc-admin help and mistakes: answered without settings or database, nothing written', () => {
  let cwd: string;
  beforeEach(() => {
    cwd = mkdtempSync(join(tmpdir(), 'svc-cli-help-'));
  });
  afterEach(() => rmSync(cwd, { recursive: true, force: true }));

  it('--help names the database it acts on (the default) and how to choose one; no file is made', async () => {
    const defaults = whereHelp(
      'sqlite:data/svc.sqlite (the default)',
      'data/community-plugins (the default)',
    );
    expect(await svcAdminIn(cwd, ['--help'])).toEqual({ code: 0, stdout: USAGE + defaults, stderr: '' });
    expect(await svcAdminIn(cwd, ['help'])).toEqual({ code: 0, stdout: USAGE + defaults, stderr: '' });
    // No command: the same help, as an error.
    expect(await svcAdminIn(cwd, [])).toEqual({ code: 1, stdout: '', stderr: USAGE + defaults });
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('--help names DATABASE_URL and COMMUNITY_PLUGIN_DIR when set, from the environment or .env, without the password', async () => {
    expect(
      (await svcAdminIn(cwd, ['--help'], { DATABASE_URL: 'mysql://svc:s3cret@db.internal:3306/svc' })).stdout,
    ).toBe(
      USAGE +
        whereHelp(
          'mysql://svc:***@db.internal:3306/svc (DATABASE_URL)',
          'data/community-plugins (the default)',
        ),
    );
    writeFileSync(
      join(cwd, '.env'),
      'DATABASE_URL=sqlite:/srv/svc.sqlite\nCOMMUNITY_PLUGIN_DIR=/srv/plugins\n',
    );
    expect((await svcAdminIn(cwd, ['--help'])).stdout).toBe(
      USAGE + whereHelp('sqlite:/srv/svc.sqlite (DATABASE_URL)', '/srv/plugins (COMMUNITY_PLUGIN_DIR)'),
    );
    expect(readdirSync(cwd)).toEqual(['.env']);
  });

  it('a mistyped command, a missing argument or a command without its subcommand: exit 1, nothing made', async () => {
    expect(await svcAdminIn(cwd, ['promte', 'a@example.com'])).toEqual({
      code: 1,
      stdout: '',
      stderr: "error: unknown command 'promte'\n(Did you mean promote?)\n",
    });
    expect(await svcAdminIn(cwd, ['promote'])).toEqual({
      code: 1,
      stdout: '',
      stderr: "error: missing required argument 'email'\n",
    });
    const plugins = await svcAdminIn(cwd, ['plugins']);
    expect(plugins.code).toBe(1);
    expect(plugins.stderr).toMatch(/^Usage: svc-admin plugins \[options\] \[command\]\n/);
    expect(plugins.stderr).toContain('Hash every approved plugin file in COMMUNITY_PLUGIN_DIR and');
    expect(await svcAdminIn(cwd, ['help', 'promote'])).toEqual({
      code: 0,
      stdout:
        'Usage: svc-admin promote [options] <email>\n\nMake the user with this email an admin\n\nOptions:\n  -h, --help  display help for command\n',
      stderr: '',
    });
    expect(readdirSync(cwd)).toEqual([]);
  });
});

describe('admins: svc-admin CLI and SVC_ADMIN_EMAILS', () => {
  const smtp = new SmtpSink();
  beforeAll(() => smtp.start());
  afterAll(() => smtp.stop());

  describe('svc-admin promote | demote | list, as a process on the same database', () => {
    let t: TestApp;
    let url: string;
    let alice: SignedInUser;
    let bob: SignedInUser;

    beforeAll(async () => {
      t = await createTestApp({ smtp });
      url = databaseUrlOf(t);
      alice = await signUpAs(t, smtp, 'alice');
      bob = await signUpAs(t, smtp, 'bob');
    });
    afterAll(() => t.close());

    const isAdminOverHttp = async (user: SignedInUser) =>
      (
        (
          await t
            .http()
            .get('/api/v1/community-plugins/me/')
            .set('Authorization', `Bearer ${user.token}`)
            .expect(200)
        ).body as {
          data: { is_admin: boolean };
        }
      ).data.is_admin;

    it('lists no admins on a fresh install: there is no default admin', async () => {
      expect(await svcAdmin(url, ['list'])).toEqual({ code: 0, stdout: '', stderr: 'No admins\n' });
    });

    it('promotes by email, case and surrounding spaces aside, and the running server sees it at once', async () => {
      expect(await isAdminOverHttp(alice)).toBe(false);
      expect(
        (
          await t
            .http()
            .get('/api/v1/community-plugins/?status=pending')
            .set('Authorization', `Bearer ${alice.token}`)
        ).status,
      ).toBe(403);

      expect(await svcAdmin(url, ['promote', ' Alice@Example.COM '])).toEqual({
        code: 0,
        stdout: 'Promoted Alice@Example.COM to admin; its tokens were revoked, so it logs in again\n',
        stderr: '',
      });
      expect(await isAdminInDatabase(t, 'alice@example.com')).toBe(true);
      // A promotion revokes the tokens issued before it, as start-up promotion does.
      await t
        .http()
        .get('/api/v1/community-plugins/me/')
        .set('Authorization', `Bearer ${alice.token}`)
        .expect(401);
      alice = { ...alice, token: await login(t, alice) };
      expect(await isAdminOverHttp(alice)).toBe(true);
      expect(
        (
          await t
            .http()
            .get('/api/v1/community-plugins/?status=pending')
            .set('Authorization', `Bearer ${alice.token}`)
        ).status,
      ).toBe(200);

      expect(await svcAdmin(url, ['promote', 'alice@example.com'])).toEqual({
        code: 0,
        stdout: 'alice@example.com is already an admin\n',
        stderr: '',
      });
    });

    it('clears a password not set through the OTP mail on promotion, and says how the owner sets one', async () => {
      const legacy = await signUpAs(t, smtp, 'legacy');
      // A password from before confirmation cleared unproven ones: chosen at registration.
      await t.dataSource.query('UPDATE users SET password_set_via_otp = ? WHERE email = ?', [
        false,
        legacy.email,
      ]);
      expect(await svcAdmin(url, ['promote', legacy.email])).toEqual({
        code: 0,
        stdout: 'Promoted legacy@example.com to admin; its tokens were revoked, so it logs in again\n',
        stderr:
          'Note: the password of legacy@example.com was not set through the OTP mail, so it was cleared: ' +
          'the owner sets one at /password-reset (generate/otp, then new-password) before logging in.\n',
      });
      expect(
        (
          await t
            .http()
            .post('/api/v1/login/')
            .send({ emailOrUsername: legacy.email, password: legacy.password })
        ).body,
      ).toEqual(accountFail('Invalid login credentials'));
      await setPasswordByOtp(t, smtp, legacy);
      expect(await isAdminOverHttp({ ...legacy, token: await login(t, legacy) })).toBe(true);
      expect((await svcAdmin(url, ['demote', legacy.email])).code).toBe(0);
    });

    it('lists one line per admin: id, email and name', async () => {
      await svcAdmin(url, ['promote', bob.email]);
      bob = { ...bob, token: await login(t, bob) };
      expect(await svcAdmin(url, ['list'])).toEqual({
        code: 0,
        stdout: `${alice.id}\talice@example.com\talice\n${bob.id}\tbob@example.com\tbob\n`,
        stderr: '',
      });
    });

    it('demotes, and the running server sees that at once too', async () => {
      expect(await svcAdmin(url, ['demote', 'bob@example.com'])).toEqual({
        code: 0,
        stdout: 'Demoted bob@example.com; its tokens were revoked, so it logs in again\n',
        stderr: '',
      });
      expect(await isAdminInDatabase(t, 'bob@example.com')).toBe(false);
      // The admin's tokens end with the role: the running server refuses them at once.
      await t
        .http()
        .get('/api/v1/community-plugins/me/')
        .set('Authorization', `Bearer ${bob.token}`)
        .expect(401);
      bob = { ...bob, token: await login(t, bob) };
      expect(await isAdminOverHttp(bob)).toBe(false);
      expect(await svcAdmin(url, ['demote', 'bob@example.com'])).toEqual({
        code: 0,
        stdout: 'bob@example.com is not an admin\n',
        stderr: '',
      });
      expect((await svcAdmin(url, ['list'])).stdout).toBe(`${alice.id}\talice@example.com\talice\n`);
    });

    it('exits 1 with `No user found with email <EMAIL> in <DATABASE>` on stderr for an unknown email', async () => {
      for (const command of ['promote', 'demote', 'deactivate', 'activate']) {
        expect(await svcAdmin(url, [command, 'nobody@example.com'])).toEqual({
          code: 1,
          stdout: '',
          stderr: `No user found with email nobody@example.com in ${url}\n`,
        });
      }
    });

    it('refuses to demote an address SVC_ADMIN_EMAILS lists: exit 1, one line on stderr, nothing changed or recorded', async () => {
      expect(await isAdminInDatabase(t, 'alice@example.com')).toBe(true);
      const before = await auditRows(t);
      const result = await svcAdmin(url, ['demote', ' Alice@Example.com '], {
        SVC_ADMIN_EMAILS: 'other@example.com, ALICE@example.com ',
      });
      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr: `Alice@Example.com is an admin through SVC_ADMIN_EMAILS in ${url}: remove the address from the setting to demote it\n`,
      });
      expect(await isAdminInDatabase(t, 'alice@example.com')).toBe(true);
      expect(await auditRows(t)).toEqual(before);
      // The setting names whole addresses (case aside): another +tag of a mailbox is not listed.
      const unlisted = await svcAdmin(url, ['demote', 'bob@example.com'], {
        SVC_ADMIN_EMAILS: 'other@example.com,bob+ops@example.com',
      });
      expect(unlisted).toEqual({ code: 0, stdout: 'bob@example.com is not an admin\n', stderr: '' });
    });

    it('makes no change it cannot record: with the audit chain head gone, promote fails and changes nothing', async () => {
      const entries = async () =>
        Number(
          ((await t.dataSource.query('SELECT COUNT(*) AS n FROM audit_log')) as Array<{ n: unknown }>)[0].n,
        );
      const [head] = (await t.dataSource.query(
        'SELECT entries, last_hash FROM audit_chain WHERE id = 1',
      )) as Array<{
        entries: unknown;
        last_hash: string;
      }>;
      const before = await entries();
      await t.dataSource.query('DELETE FROM audit_chain WHERE id = 1');
      try {
        const result = await svcAdmin(url, ['promote', bob.email]);
        expect(result.code).not.toBe(0);
        expect(result.stdout).toBe('');
        expect(await isAdminInDatabase(t, bob.email)).toBe(false);
        expect(await entries()).toBe(before);
      } finally {
        await t.dataSource.query('INSERT INTO audit_chain (id, entries, last_hash) VALUES (1, ?, ?)', [
          Number(head.entries),
          head.last_hash,
        ]);
      }
    });

    it('refuses a missing argument or an unknown command with exit status 1', async () => {
      const missing = await svcAdmin(url, ['promote']);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain("missing required argument 'email'");
      const unknown = await svcAdmin(url, ['crown', 'alice@example.com']);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain("unknown command 'crown'");
    });

    const sha256Column = async () => {
      const runner = t.dataSource.createQueryRunner();
      try {
        return (await runner.getTable('user_plugins'))?.findColumnByName('sha256');
      } finally {
        await runner.release();
      }
    };

    it('lists without migrating: a read-only command changes no schema', async () => {
      expect((await svcAdmin(url, ['promote', alice.email])).code).toBe(0);
      // A table without the column has no index on it either (SQLite refuses to drop an indexed column).
      await t.dataSource.query(
        t.config.database.type === 'mysql'
          ? 'DROP INDEX idx_user_plugins_sha256 ON user_plugins'
          : 'DROP INDEX idx_user_plugins_sha256',
      );
      await t.dataSource.query('ALTER TABLE user_plugins DROP COLUMN sha256');
      const [{ count }] = (await t.dataSource.query('SELECT COUNT(*) AS count FROM migrations')) as Array<{
        count: number | string;
      }>;
      await t.dataSource.query(
        'DELETE FROM migrations WHERE id = (SELECT id FROM (SELECT MAX(id) AS id FROM migrations) AS latest)',
      );

      expect(await svcAdmin(url, ['list'])).toEqual({
        code: 0,
        stdout: `${alice.id}\talice@example.com\talice\n`,
        stderr: '',
      });
      expect(await sha256Column()).toBeUndefined();
      const [after] = (await t.dataSource.query('SELECT COUNT(*) AS count FROM migrations')) as Array<{
        count: number | string;
      }>;
      expect(Number(after.count)).toBe(Number(count) - 1);
    });

    it('a command that writes runs the migrations and the schema upgrade first, though it loads no plugin module', async () => {
      expect(await svcAdmin(url, ['demote', 'bob@example.com'])).toEqual({
        code: 0,
        stdout: 'bob@example.com is not an admin\n',
        stderr: '',
      });
      expect((await sha256Column())?.isNullable).toBe(true);
      const [{ count }] = (await t.dataSource.query('SELECT COUNT(*) AS count FROM migrations')) as Array<{
        count: number | string;
      }>;
      expect(Number(count)).toBe(t.dataSource.migrations.length);
    });

    it('exits 1 naming the variable when the configuration is bad', async () => {
      expect(await svcAdmin('postgres://nowhere/db', ['list'])).toEqual({
        code: 1,
        stdout: '',
        stderr: 'Invalid environment: DATABASE_URL must be sqlite:<path> or mysql://user:pass@host:3306/db\n',
      });
    });
  });

  describe('svc-admin deactivate | activate', () => {
    let t: TestApp;
    let url: string;
    beforeAll(async () => {
      t = await createTestApp({ smtp });
      url = databaseUrlOf(t);
    });
    afterAll(() => t.close());

    const meStatus = async (token: string) =>
      (await t.http().get('/api/v1/community-plugins/me/').set('Authorization', `Bearer ${token}`)).status;
    const loginBody = async (user: SignedInUser) =>
      (await t.http().post('/api/v1/login/').send({ emailOrUsername: user.email, password: user.password }))
        .body as { status: string; message: unknown };

    it('takes an account out of service: every token dies at once, login and the activation link do not bring it back', async () => {
      const carl = await signUpAs(t, smtp, 'carl');
      const secondToken = await login(t, carl);
      expect(await svcAdmin(url, ['deactivate', ' CARL@example.com'])).toEqual({
        code: 0,
        stdout: 'Deactivated CARL@example.com\n',
        stderr: '',
      });
      expect(await meStatus(carl.token)).toBe(401);
      expect(await meStatus(secondToken)).toBe(401);
      expect(await loginBody(carl)).toEqual(accountFail('Your account is not active'));
      // An account already confirmed gets no activation link, so none can undo an operator's decision.
      smtp.clear();
      await t.http().post('/api/v1/generate/confirm_email/').send({ email: carl.email }).expect(200);
      await t.deliverMail();
      expect(smtp.lastTo(carl.email)).toBeUndefined();
      expect(await loginBody(carl)).toEqual(accountFail('Your account is not active'));
      expect(await svcAdmin(url, ['deactivate', carl.email])).toEqual({
        code: 0,
        stdout: 'carl@example.com is already deactivated\n',
        stderr: '',
      });

      expect(await svcAdmin(url, ['activate', carl.email])).toEqual({
        code: 0,
        stdout: 'Activated carl@example.com\n',
        stderr: '',
      });
      expect(await meStatus(carl.token)).toBe(401);
      expect(await meStatus(await login(t, carl))).toBe(200);
      expect(await svcAdmin(url, ['activate', carl.email])).toEqual({
        code: 0,
        stdout: 'carl@example.com is not deactivated\n',
        stderr: '',
      });
    });

    it('activating an account whose email is unconfirmed says that login still waits for it', async () => {
      const user = { username: 'dora', email: 'dora@example.com', password: STRONG_PASSWORD };
      await register(t, user);
      expect(await svcAdmin(url, ['activate', user.email])).toEqual({
        code: 0,
        stdout: 'dora@example.com is not deactivated\n',
        stderr:
          'Note: dora@example.com has not confirmed its email yet; login waits for that confirmation.\n',
      });
    });
  });

  describe('SVC_ADMIN_EMAILS', () => {
    it('makes existing users with a listed email admins at start-up, case-insensitive and trimmed', async () => {
      const first = await createTestApp({ smtp });
      const url = databaseUrlOf(first);
      const dataDir = mkdtempSync(join(tmpdir(), 'svc-seed-'));
      const carol = await signUpAs(first, smtp, 'carol');
      await signUpAs(first, smtp, 'dave');
      await signUpAs(first, smtp, 'erin');
      expect(await isAdminInDatabase(first, carol.email)).toBe(false);
      await first.close();

      const second = await bootApp({
        databaseUrl: url,
        dataDir,
        env: { SVC_ADMIN_EMAILS: ' CAROL@example.com ,, Dave@Example.com,ghost@example.com ' },
      });
      try {
        expect(await isAdminInDatabase(second, 'carol@example.com')).toBe(true);
        expect(await isAdminInDatabase(second, 'dave@example.com')).toBe(true);
        expect(await isAdminInDatabase(second, 'erin@example.com')).toBe(false);
        expect(
          await second.dataSource.query('SELECT id FROM users WHERE email = ?', ['ghost@example.com']),
        ).toEqual([]);
      } finally {
        await second.close();
      }

      // The flag is in the database: a start without the variable keeps these admins.
      const third = await bootApp({ databaseUrl: url, dataDir });
      try {
        expect(await isAdminInDatabase(third, 'carol@example.com')).toBe(true);
        expect(await isAdminInDatabase(third, 'erin@example.com')).toBe(false);
      } finally {
        await third.close();
      }
    });

    it('makes a user who registers later with a listed email an admin from the start', async () => {
      const t = await createTestApp({ smtp, env: { SVC_ADMIN_EMAILS: 'Later@Example.com' } });
      try {
        const later = await signUpAs(t, smtp, 'later');
        const other = await signUpAs(t, smtp, 'other');
        expect(await isAdminInDatabase(t, later.email)).toBe(true);
        expect(await isAdminInDatabase(t, other.email)).toBe(false);
        // svc-admin without the setting: the API's grant, as the audit log records it.
        expect(await svcAdmin(databaseUrlOf(t), ['list'])).toEqual({
          code: 0,
          stdout: `${later.id}\tlater@example.com\tlater\tSVC_ADMIN_EMAILS\n`,
          stderr: '',
        });
      } finally {
        await t.close();
      }
    });

    it("svc-admin without the setting sees the API's grants in the audit log: list marks them, demote refuses and changes nothing", async () => {
      const t = await createTestApp({ smtp, env: { SVC_ADMIN_EMAILS: 'kim@example.com' } });
      try {
        const url = databaseUrlOf(t);
        const kim = await signUpAs(t, smtp, 'kim');
        const lee = await signUpAs(t, smtp, 'lee');
        expect((await svcAdmin(url, ['promote', lee.email])).code).toBe(0);
        expect(await svcAdmin(url, ['list'])).toEqual({
          code: 0,
          stdout: `${kim.id}\tkim@example.com\tkim\tSVC_ADMIN_EMAILS\n${lee.id}\tlee@example.com\tlee\n`,
          stderr: '',
        });
        const before = await auditRows(t);
        expect(await svcAdmin(url, ['demote', 'Kim@Example.com'])).toEqual({
          code: 1,
          stdout: '',
          stderr: `Kim@Example.com is an admin through SVC_ADMIN_EMAILS in ${url}: remove the address from the setting to demote it\n`,
        });
        expect(await isAdminInDatabase(t, 'kim@example.com')).toBe(true);
        expect(await auditRows(t)).toEqual(before);
        // The API agrees: kim is an admin to it.
        const me = await t
          .http()
          .get('/api/v1/community-plugins/me/')
          .set('Authorization', `Bearer ${kim.token}`);
        expect((me.body as { data: { is_admin: boolean } }).data.is_admin).toBe(true);
        // An admin svc-admin made is not the setting's: demoted as before.
        expect(await svcAdmin(url, ['demote', lee.email])).toMatchObject({
          code: 0,
          stdout: expect.stringMatching(/^Demoted lee@example.com/),
        });
        // Given the setting, svc-admin judges by it, as the API with that setting would.
        expect(await svcAdmin(url, ['list'], { SVC_ADMIN_EMAILS: 'other@example.com' })).toEqual({
          code: 0,
          stdout: `${kim.id}\tkim@example.com\tkim\n`,
          stderr: '',
        });
      } finally {
        await t.close();
      }
    });

    const granted = (user: SignedInUser) => ({
      actor: 'system',
      action: 'promote',
      subject: `user:${user.id}`,
      details: { email: user.email, granted_by: 'SVC_ADMIN_EMAILS' },
    });

    it('records a grant at registration as a promote by `system`, in the audit API too', async () => {
      const t = await createTestApp({ smtp, env: { SVC_ADMIN_EMAILS: 'Hana@Example.com' } });
      try {
        const hana = await signUpAs(t, smtp, 'hana');
        await signUpAs(t, smtp, 'ivan');
        expect(await roleChanges(t)).toEqual([granted(hana)]);
        const listed = await t
          .http()
          .get(`/api/v1/audit/?action=promote&subject=user:${hana.id}`)
          .set('Authorization', `Bearer ${hana.token}`)
          .expect(200);
        expect((listed.body as { data: { total: number; entries: unknown[] } }).data).toMatchObject({
          total: 1,
          entries: [{ ...granted(hana), actor_user_id: null }],
        });
      } finally {
        await t.close();
      }
    });

    it('records each grant at start-up once: two replicas starting at once, then a restart; an admin the log shows promoted gets none, and the chain verifies', async () => {
      const first = await createTestApp({ smtp });
      const url = databaseUrlOf(first);
      const dataDir = mkdtempSync(join(tmpdir(), 'svc-grant-'));
      const frank = await signUpAs(first, smtp, 'frank');
      const gina = await signUpAs(first, smtp, 'gina');
      const hugo = await signUpAs(first, smtp, 'hugo');
      // Gina is an admin by the flag with nothing in the log, as an older version's start left her.
      await first.dataSource.query('UPDATE users SET is_admin = ? WHERE id = ?', [true, gina.id]);
      await first.close();
      // Hugo's promotion is in the log already, by svc-admin.
      expect((await svcAdmin(url, ['promote', hugo.email])).code).toBe(0);

      const env = { SVC_ADMIN_EMAILS: 'frank@example.com, Gina@example.com,hugo@example.com' };
      const replicas = await Promise.all([
        bootApp({ databaseUrl: url, dataDir, env }),
        bootApp({ databaseUrl: url, dataDir, env }),
      ]);
      const bySubject = <Row extends { subject: string }>(rows: Row[]) =>
        [...rows].sort((a, b) => a.subject.localeCompare(b.subject));
      const expected = bySubject([
        granted(frank),
        granted(gina),
        { actor: 'svc-admin', action: 'promote', subject: `user:${hugo.id}`, details: { email: hugo.email } },
      ]);
      try {
        expect(bySubject(await roleChanges(replicas[0]))).toEqual(expected);
        expect(await isAdminInDatabase(replicas[0], frank.email)).toBe(true);
      } finally {
        await Promise.all(replicas.map((replica) => replica.close()));
      }

      const again = await bootApp({ databaseUrl: url, dataDir, env });
      try {
        expect(bySubject(await roleChanges(again))).toEqual(expected);
      } finally {
        await again.close();
      }
      const verified = await svcAdmin(url, ['audit', 'verify']);
      expect(verified).toEqual({
        code: 0,
        stdout: expect.stringMatching(/^\d+ entries, chain intact\n$/),
        stderr: '',
      });
    });
  });
});
