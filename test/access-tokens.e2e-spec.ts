import { createHash } from 'node:crypto';
import { TOKEN_MANAGEMENT_REFUSED, TOKEN_REFUSED } from '../src/common/access-scopes';
import { MAX_TOKENS_PER_USER, TOKEN_MESSAGES } from '../src/access-tokens/access-tokens.service';
import { STRONG_PASSWORD, mailedOtp } from './helpers/accounts';
import { api } from './helpers/client';
import { expectFail, fail, okMessage } from './helpers/envelopes';
import { marketplaceApp, signUpAs, upload, validFields, type SignedInUser } from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';
import type { TestApp } from './helpers/test-app';

/**
 * Issue 45: personal access tokens for automation, over HTTP on the real app and database.
 * boss is an admin (SVC_ADMIN_EMAILS); alice and bob are users.
 */
describe('personal access tokens', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let users: Record<'alice' | 'bob' | 'boss', SignedInUser>;
  beforeAll(async () => {
    await smtp.start();
    ({ t, users } = await marketplaceApp(smtp, ['alice', 'bob', 'boss']));
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });
  afterEach(() => t.clock.reset());

  const create = (caller: { token: string }, body: Record<string, unknown>) =>
    api(t, caller, 'post', 'account/tokens').send(body);
  const made = async (caller: { token: string }, scopes: string[], name = 'ci') => {
    const answer = await create(caller, { name, scopes });
    expect(answer.status).toBe(201);
    return {
      token: (answer.body as { data: { token: string; id: number } }).data.token,
      id: answer.body.data.id as number,
    };
  };
  const auditOf = async (action: string) =>
    (await t.dataSource.query('SELECT subject, details FROM audit_log WHERE action = ? ORDER BY seq', [
      action,
    ])) as Array<{
      subject: string;
      details: string;
    }>;

  it('shows the secret once, stores only its hash, lists the token without it, and records the creation', async () => {
    t.clock.freeze();
    const now = t.clock.now();
    const answer = await create(users.alice, { name: 'nightly scan', scopes: ['read', 'upload'] });
    expect(answer.status).toBe(201);
    const { token, id } = answer.body.data as { token: string; id: number };
    expect(token).toMatch(/^svcpat_[A-Za-z0-9_-]{43}$/);
    const expires = new Date(now.getTime() + 90 * 86_400_000).toISOString();
    expect(answer.body).toEqual({
      status: 'success',
      data: {
        id,
        name: 'nightly scan',
        scopes: ['read', 'upload'],
        created_at: now.toISOString(),
        expires_at: expires,
        last_used_at: null,
        token,
      },
    });
    const [row] = (await t.dataSource.query('SELECT * FROM personal_access_tokens WHERE id = ?', [
      id,
    ])) as Array<Record<string, unknown>>;
    expect(row.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(token.slice(7));
    // A use is noted; the list never shows the secret.
    await api(t, { token }, 'get', 'community-plugins/me/').expect(200);
    const list = await api(t, users.alice, 'get', 'account/tokens').expect(200);
    expect(list.body).toEqual({
      status: 'success',
      data: [
        {
          id,
          name: 'nightly scan',
          scopes: ['read', 'upload'],
          created_at: now.toISOString(),
          expires_at: expires,
          last_used_at: now.toISOString(),
        },
      ],
    });
    expect(JSON.stringify(list.body)).not.toContain(token);
    expect((await auditOf('token_create')).at(-1)).toEqual({
      subject: `user:${users.alice.id}`,
      details: JSON.stringify({
        expires_at: expires,
        name: 'nightly scan',
        scopes: 'read,upload',
        token_id: id,
      }),
    });
    // Expired, it names nobody and leaves the list.
    t.clock.advance(90 * 86_400_000);
    expectFail(await api(t, { token }, 'get', 'community-plugins/me/'), 401, 'Unauthorized');
    expect((await api(t, users.alice, 'get', 'account/tokens').expect(200)).body.data).toEqual([]);
  });

  it('refuses bad arguments, each with its message, in order', async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ scopes: ['read'] }, 400, TOKEN_MESSAGES.name],
      [{ name: 'x'.repeat(101), scopes: ['read'] }, 400, TOKEN_MESSAGES.name],
      [{ name: 'ci' }, 400, TOKEN_MESSAGES.scopes],
      [{ name: 'ci', scopes: ['read', 'admin'] }, 400, TOKEN_MESSAGES.scopes],
      [{ name: 'ci', scopes: ['read'], expires_in_days: '0' }, 400, TOKEN_MESSAGES.days],
      [{ name: 'ci', scopes: ['read'], expires_in_days: '366' }, 400, TOKEN_MESSAGES.days],
      [{ name: 'ci', scopes: ['read'], expires_in_days: 'soon' }, 400, TOKEN_MESSAGES.days],
      [{ name: 'ci', scopes: ['review'] }, 403, TOKEN_MESSAGES.review],
    ];
    for (const [body, status, message] of cases) expectFail(await create(users.bob, body), status, message);
    expect(TOKEN_MESSAGES).toEqual({
      name: 'Token name must be 1 to 100 characters',
      scopes: 'Scopes must be one or more of read, upload, review',
      days: 'expires_in_days must be an integer from 1 to 365',
      review: 'Only an admin may give a token the review scope',
      limit: 'Token limit reached: at most 50 tokens per user; revoke one first',
      notFound: 'Token not found',
    });
    // A form with comma-separated scopes and a term of a year works too.
    const form = await api(t, users.bob, 'post', 'account/tokens')
      .type('form')
      .send('name=form&scopes=read,upload&expires_in_days=365');
    expect([form.status, form.body.data.scopes]).toEqual([201, ['read', 'upload']]);
  });

  it(`keeps at most ${MAX_TOKENS_PER_USER} live tokens per user, also when creations come at once`, async () => {
    const carol = await signUpAs(t, smtp, 'carol');
    const answers = await Promise.all(
      Array.from({ length: MAX_TOKENS_PER_USER + 5 }, (_, i) =>
        create(carol, { name: `t${i}`, scopes: ['read'] }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(MAX_TOKENS_PER_USER);
    for (const refused of answers.filter((answer) => answer.status !== 201))
      expectFail(refused, 409, TOKEN_MESSAGES.limit);
  });

  it('opens each route by scope: reads with read, uploads with upload, admin routes with review and the role held now', async () => {
    const reader = await made(users.alice, ['read']);
    const uploader = await made(users.alice, ['upload']);
    await api(t, reader, 'get', 'community-plugins/me/').expect(200);
    await api(t, reader, 'get', 'sessions/').expect(200);
    expectFail(
      await upload(t, reader.token, { fields: validFields('Scoped one') }),
      403,
      'This token lacks the upload scope',
    );
    expectFail(
      await api(t, uploader, 'get', 'community-plugins/me/'),
      403,
      'This token lacks the read scope',
    );
    const uploaded = await upload(t, uploader.token, { fields: validFields('Scoped two') });
    expect(uploaded.status).toBe(201);
    // Writes no scope names are refused to every token.
    expectFail(await api(t, reader, 'post', 'sessions/').send({ name: 'by token' }), 403, TOKEN_REFUSED);
    // Logout is an account endpoint: its refusal repeats itself under `data`.
    const logout = await api(t, reader, 'get', 'logout/');
    expect([logout.status, logout.body]).toEqual([
      403,
      { ...fail(TOKEN_REFUSED), data: fail(TOKEN_REFUSED) },
    ]);
    // Admin routes: review, and the admin role.
    const pluginId = uploaded.body.data.id as number;
    const bossReader = await made(users.boss, ['read']);
    const bossReviewer = await made(users.boss, ['review']);
    expectFail(
      await api(t, bossReader, 'get', `community-plugins/${pluginId}/source/`),
      403,
      'This token lacks the review scope',
    );
    await api(t, bossReviewer, 'get', `community-plugins/${pluginId}/source/`).expect(200);
    expectFail(
      await api(t, reader, 'get', `community-plugins/${pluginId}/source/`),
      403,
      'This token lacks the review scope',
    );
  });

  it('never manages tokens, nor logs out, with a token', async () => {
    const all = await made(users.alice, ['read', 'upload']);
    expectFail(await api(t, all, 'get', 'account/tokens'), 403, TOKEN_MANAGEMENT_REFUSED);
    expectFail(await create(all, { name: 'child', scopes: ['read'] }), 403, TOKEN_MANAGEMENT_REFUSED);
    expectFail(await api(t, all, 'delete', `account/tokens/${all.id}`), 403, TOKEN_MANAGEMENT_REFUSED);
    expect(TOKEN_MANAGEMENT_REFUSED).toBe(
      'An access token cannot manage access tokens, the password or the second factor',
    );
    expect(TOKEN_REFUSED).toBe('This route does not accept access tokens');
  });

  it('revokes one: it answers 401 at once, others and other users are untouched, and the revocation is recorded', async () => {
    const kept = await made(users.alice, ['read']);
    const revoked = await made(users.alice, ['read']);
    expectFail(
      await api(t, users.bob, 'delete', `account/tokens/${revoked.id}`),
      404,
      TOKEN_MESSAGES.notFound,
    );
    expectFail(await api(t, users.alice, 'delete', 'account/tokens/999999'), 404, TOKEN_MESSAGES.notFound);
    expect((await api(t, users.alice, 'delete', `account/tokens/${revoked.id}`).expect(200)).body).toEqual({
      status: 'success',
      data: null,
    });
    expectFail(await api(t, revoked, 'get', 'community-plugins/me/'), 401, 'Unauthorized');
    await api(t, kept, 'get', 'community-plugins/me/').expect(200);
    expectFail(
      await api(t, users.alice, 'delete', `account/tokens/${revoked.id}`),
      404,
      TOKEN_MESSAGES.notFound,
    );
    expect((await auditOf('token_revoke')).at(-1)).toEqual({
      subject: `user:${users.alice.id}`,
      details: JSON.stringify({ name: 'ci', token_id: revoked.id }),
    });
  });

  it('a revocation racing 30 uses: each use is answered 200 or 401, and every use after the revocation is 401', async () => {
    const token = await made(users.alice, ['read']);
    const answers = await Promise.all([
      ...Array.from({ length: 30 }, () => api(t, token, 'get', 'community-plugins/me/')),
      api(t, users.alice, 'delete', `account/tokens/${token.id}`),
    ]);
    expect(answers.at(-1)!.status).toBe(200);
    expect(answers.slice(0, -1).every((answer) => answer.status === 200 || answer.status === 401)).toBe(true);
    const after = await Promise.all(
      Array.from({ length: 10 }, () => api(t, token, 'get', 'community-plugins/me/')),
    );
    expect(after.map((answer) => answer.status)).toEqual(Array(10).fill(401));
  });

  it('a password change ends every token, also ones made while it was in flight', async () => {
    const dave = await signUpAs(t, smtp, 'dave');
    const before = await made(dave, ['read']);
    await t.http().post('/api/v1/generate/otp/').send({ emailOrUsername: dave.email }).expect(200);
    const otp = await mailedOtp(t, smtp, dave.email);
    const [changed, ...creations] = await Promise.all([
      t
        .http()
        .post('/api/v1/new-password/')
        .send({ emailOrUsername: dave.email, otp, password: `N3w${STRONG_PASSWORD}` }),
      ...Array.from({ length: 10 }, (_, i) => create(dave, { name: `race${i}`, scopes: ['read'] })),
    ]);
    expect(changed.body).toEqual(okMessage('Password Change Successful'));
    for (const creation of creations) expect([201, 401]).toContain(creation.status);
    for (const token of [
      before.token,
      ...creations.filter((c) => c.status === 201).map((c) => c.body.data.token as string),
    ]) {
      expectFail(await api(t, { token }, 'get', 'community-plugins/me/'), 401, 'Unauthorized');
    }
    const [{ count }] = (await t.dataSource.query(
      'SELECT COUNT(*) AS count FROM personal_access_tokens WHERE user_id = ?',
      [dave.id],
    )) as Array<{ count: unknown }>;
    expect(Number(count)).toBe(0);
  });
});
