import { dirname } from 'node:path';
import { mailboxOf } from '../src/users/mailbox';
import { activate, register, setPasswordByOtp, STRONG_PASSWORD } from './helpers/accounts';
import { fail } from './helpers/envelopes';
import {
  benignPlugin,
  databaseUrlOf,
  readThenApprove,
  signedIn,
  upload,
  validFields,
} from './helpers/marketplace';
import type { SignedInUser } from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';
import { bootApp, createTestApp, TestApp } from './helpers/test-app';

jest.setTimeout(120_000);

const SELF_REVIEW = fail('Admins cannot review their own plugins');
const OWN_RATING = fail('You cannot rate your own plugin');
const ADMIN_EMAILS = 'boss@example.com,alice+x@example.com,alice+ops@googlemail.com';

/**
 * The own-plugin rules compare people, not accounts: an address that reaches the uploader's
 * mailbox (another case, a +tag, and at gmail dots or googlemail) is the uploader.
 */
describe('own plugins are judged by mailbox', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  const users: Record<string, SignedInUser> = {};

  /** Registered under `typed` as a person types it; mail goes to the stored (lower-case) address. */
  async function signUpWith(name: string, typed: string): Promise<SignedInUser> {
    const user = { username: name, email: typed.toLowerCase(), password: STRONG_PASSWORD };
    await register(t, { ...user, email: typed });
    await activate(t, smtp, user);
    await setPasswordByOtp(t, smtp, user);
    return signedIn(t, user);
  }

  const uploadAs = async (user: SignedInUser, name: string): Promise<number> => {
    const response = await upload(t, user.token, { fields: validFields(name), file: benignPlugin(name) });
    expect(response.status).toBe(201);
    return (response.body as { data: { id: number } }).data.id;
  };
  const reject = (user: SignedInUser, id: number) =>
    t
      .http()
      .post(`/api/v1/community-plugins/${id}/reject/`)
      .set('Authorization', `Bearer ${user.token}`)
      .send({ reason: 'Not good enough' });
  const rate = (user: SignedInUser, id: number) =>
    t
      .http()
      .put(`/api/v1/community-plugins/${id}/rating/`)
      .set('Authorization', `Bearer ${user.token}`)
      .send({ stars: 4 });

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp, env: { SVC_ADMIN_EMAILS: ADMIN_EMAILS } });
    for (const [name, typed] of [
      ['alice', 'alice@example.com'],
      ['aliceAdmin', 'Alice+x@Example.com'],
      ['dottedAlice', 'a.lice@example.com'],
      ['boss', 'boss@example.com'],
      ['bob', 'bob@example.com'],
      ['gmailAlice', 'A.Lice@Gmail.com'],
      ['gmailAdmin', 'alice+ops@googlemail.com'],
      ['plainGmailAlice', 'ALICE@gmail.com'],
      ['orgAlice', 'alice@example.org'],
    ] as const) {
      users[name] = await signUpWith(name, typed);
    }
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  it('an admin at Alice+x@Example.com neither approves nor rejects nor rates what alice@example.com uploaded; another admin approves', async () => {
    const { alice, aliceAdmin, boss, bob } = users;
    const id = await uploadAs(alice, 'Alice tagged');
    expect((await readThenApprove(t, aliceAdmin.token, id).expect(403)).body).toEqual(SELF_REVIEW);
    expect((await reject(aliceAdmin, id).expect(403)).body).toEqual(SELF_REVIEW);
    await readThenApprove(t, boss.token, id).expect(200);
    expect((await rate(aliceAdmin, id).expect(403)).body).toEqual(OWN_RATING);
    // Revoking the approved plugin is a review of it too.
    expect((await reject(aliceAdmin, id).expect(403)).body).toEqual(SELF_REVIEW);
    await rate(bob, id).expect(200);
  });

  it('outside the known providers a dot is part of the mailbox: a.lice@example.com is someone else', async () => {
    const { alice, dottedAlice, boss } = users;
    const id = await uploadAs(alice, 'Alice dotted');
    await readThenApprove(t, boss.token, id).expect(200);
    expect((await rate(dottedAlice, id).expect(200)).body).toMatchObject({ data: { ratings_count: 1 } });
  });

  it('at gmail dots and googlemail are one mailbox: A.Lice@Gmail.com, alice+ops@googlemail.com and ALICE@gmail.com are one person', async () => {
    const { gmailAlice, gmailAdmin, plainGmailAlice, orgAlice, boss } = users;
    const id = await uploadAs(gmailAlice, 'Gmail Alice');
    expect((await readThenApprove(t, gmailAdmin.token, id).expect(403)).body).toEqual(SELF_REVIEW);
    await readThenApprove(t, boss.token, id).expect(200);
    expect((await rate(gmailAdmin, id).expect(403)).body).toEqual(OWN_RATING);
    expect((await rate(plainGmailAlice, id).expect(403)).body).toEqual(OWN_RATING);
    await rate(orgAlice, id).expect(200);
  });

  it('accounts from before the mailbox column get theirs at the next start, and the rules hold for them', async () => {
    await t.dataSource.query('UPDATE users SET mailbox = NULL');
    const url = databaseUrlOf(t);
    const dataDir = dirname(t.config.communityPluginDir);
    await t.close();
    t = await bootApp({ databaseUrl: url, dataDir, smtp, env: { SVC_ADMIN_EMAILS: ADMIN_EMAILS } });
    const rows = (await t.dataSource.query('SELECT email, mailbox FROM users ORDER BY id')) as Array<{
      email: string;
      mailbox: string | null;
    }>;
    expect(rows).toHaveLength(Object.keys(users).length);
    for (const row of rows) expect(row.mailbox).toBe(mailboxOf(row.email));
    expect(rows.find((row) => row.email === 'a.lice@gmail.com')?.mailbox).toBe('alice@gmail.com');

    const id = await uploadAs(users.alice, 'Alice after the upgrade');
    expect((await readThenApprove(t, users.aliceAdmin.token, id).expect(403)).body).toEqual(SELF_REVIEW);
  });
});
