import {
  activationKey,
  mailedOtp,
  newUser,
  setPasswordByOtp,
  STRONG_PASSWORD,
  TestUser,
} from './helpers/accounts';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';
import {
  ADMIN_VIEW_KEYS as ADMIN_MEMBERS,
  HOSTILE_SOURCE,
  OWNER_VIEW_KEYS as OWNER_MEMBERS,
  PUBLIC_VIEW_KEYS as PUBLIC_MEMBERS,
  signUpAs,
  SignedInUser,
  upload,
  validFields,
  readThenApprove,
} from './helpers/marketplace';

/**
 * The requests of the original framework's web client (owtf/webapp: its api.ts and sagas),
 * sent as it sends them (form-urlencoded bodies, Accept: application/json, `Bearer <token>`),
 * and its answers read field by field as its sagas and reducers read them. Beside each of
 * those reads, the contract's own members are asserted too, so neither side can drift.
 */
describe('the original web client against the API', () => {
  const smtp = new SmtpSink();
  let t: TestApp;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp, env: { SVC_ADMIN_EMAILS: 'chief@example.com' } });
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });
  afterEach(() => t.clock.reset());

  /** utils/request.ts `_getFormEncodedData`: every value through encodeURIComponent, undefined included. */
  const formEncoded = (data: Record<string, unknown>) =>
    Object.entries(data)
      .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`)
      .join('&');

  /** utils/request.ts `_fetch`: the headers of every api.ts, a form body when there is data. */
  function client(
    method: 'get' | 'post' | 'patch' | 'delete',
    path: string,
    data: Record<string, unknown> | null = null,
    token?: string,
  ) {
    const server = t.http();
    let request = server[method](`/api/v1/${path}`)
      .set('Accept', 'application/json')
      .set('Content-Type', 'application/x-www-form-urlencoded;charset=UTF-8');
    if (token !== undefined) request = request.set('Authorization', `Bearer ${token}`);
    return data ? request.send(formEncoded(data)) : request;
  }

  /** What an account saga reads, and the contract's members at the top. */
  function expectAccountAnswer(
    body: Record<string, unknown>,
    status: 'success' | 'fail',
    message: unknown,
    extra: Record<string, unknown> = {},
  ): void {
    const data = body.data as Record<string, unknown>;
    expect([data.status, data.message]).toEqual([status, message]);
    expect(body).toEqual({ status, message, ...extra, data: { status, message, ...extra } });
  }

  const jwtPayload = (token: string) =>
    JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as Record<string, unknown>;

  describe('account pages', () => {
    it('signup, email verification, login and logout read data.status and data.message', async () => {
      const user = newUser('webclient');
      // SignupPage/saga.ts
      const mismatch = await client('post', 'register/', {
        email: user.email,
        password: user.password,
        confirm_password: user.password + 'x',
        username: user.username,
      }).expect(200);
      expectAccountAnswer(mismatch.body, 'fail', "Password doesn't match");
      const signup = await client('post', 'register/', {
        email: user.email,
        password: user.password,
        confirm_password: user.password,
        username: user.username,
      }).expect(200);
      expectAccountAnswer(signup.body, 'success', 'User created successfully');

      // EmailVerification/saga.ts: the send compares data.message, the verification data.status then data.message.
      const sent = await client('post', 'generate/confirm_email/', { email: user.email }).expect(200);
      expect(sent.body.data.message === 'Email send successful').toBe(true);
      expectAccountAnswer(sent.body, 'success', 'Email send successful');

      // LoginPage/saga.ts before activation: the toaster shows data.message.
      const inactive = await client('post', 'login/', {
        emailOrUsername: user.username,
        password: user.password,
      }).expect(200);
      expectAccountAnswer(inactive.body, 'fail', 'Your account is not active');

      const key = await activationKey(t, smtp, user.email);
      const verified = await client('get', `verify/confirm_email/${key}`).expect(200);
      expectAccountAnswer(verified.body, 'success', 'Email Verified');
      const unknown = await client('get', 'verify/confirm_email/no-such-key').expect(200);
      expectAccountAnswer(unknown.body, 'success', 'Invalid Link');
      // Confirmation cleared the password chosen at registration; the owner sets it by OTP.
      await setPasswordByOtp(t, smtp, user);

      const wrong = await client('post', 'login/', {
        emailOrUsername: user.username,
        password: 'Wr0ng!Password',
      }).expect(200);
      expectAccountAnswer(wrong.body, 'fail', 'Invalid login credentials');
      const missing = await client('post', 'login/', { emailOrUsername: user.username }).expect(200);
      expectAccountAnswer(missing.body, 'fail', 'Missing password value');

      const login = await client('post', 'login/', {
        emailOrUsername: user.email,
        password: user.password,
      }).expect(200);
      const token = login.body.data.message['jwt-token'] as string;
      expect(typeof token).toBe('string');
      expectAccountAnswer(login.body, 'success', { 'jwt-token': token });
      // jwt_decode(token): username for the navigation bar, exp for the automatic logout.
      expect(jwtPayload(token)).toMatchObject({ username: user.username, exp: expect.any(Number) });

      // LoginPage/api.ts logout: GET with the form content type and the bearer token.
      const logout = await client('get', 'logout/', null, token).expect(200);
      expectAccountAnswer(logout.body, 'success', 'Logged out');
      await client('get', 'sessions/', null, token).expect(401);
    });

    it('an expired link answers Link Expired with the email under data too', async () => {
      const user = newUser('webexpired');
      await client('post', 'register/', {
        email: user.email,
        password: user.password,
        confirm_password: user.password,
        username: user.username,
      }).expect(200);
      await client('post', 'generate/confirm_email/', { email: user.email }).expect(200);
      const key = await activationKey(t, smtp, user.email);
      t.clock.advance(60 * 60 * 1000 + 5_000);
      const expired = await client('get', `verify/confirm_email/${key}`).expect(200);
      expectAccountAnswer(expired.body, 'success', 'Link Expired', { email: user.email });
    });

    it('forgot password, OTP and new password read data.status and data.message', async () => {
      const user: TestUser = newUser('webotp');
      await client('post', 'register/', {
        email: user.email,
        password: user.password,
        confirm_password: user.password,
        username: user.username,
      }).expect(200);

      // ForgotPasswordPage/saga.ts sends `otp: action.otp`, undefined there: the form says "undefined".
      const unknown = await client('post', 'generate/otp/', {
        emailOrUsername: 'nobody-' + user.username,
        otp: undefined,
      }).expect(200);
      expectAccountAnswer(unknown.body, 'fail', "Username / Email doesn't exist");
      const sent = await client('post', 'generate/otp/', {
        emailOrUsername: user.username,
        otp: undefined,
      }).expect(200);
      expectAccountAnswer(sent.body, 'success', 'Otp Send Successful');
      const otp = await mailedOtp(t, smtp, user.email);

      // OtpPage/saga.ts
      const wrongOtp = String((Number(otp) + 1) % 1_000_000).padStart(6, '0');
      const refused = await client('post', 'verify/otp/', {
        emailOrUsername: user.username,
        otp: wrongOtp,
      }).expect(200);
      expectAccountAnswer(refused.body, 'fail', 'Invalid OTP');
      const checked = await client('post', 'verify/otp/', { emailOrUsername: user.username, otp }).expect(
        200,
      );
      expectAccountAnswer(checked.body, 'success', 'OTP Verified');

      // NewPasswordPage/saga.ts
      const weak = await client('post', 'new-password/', {
        emailOrUsername: user.username,
        password: 'weak',
        otp,
      }).expect(200);
      expectAccountAnswer(weak.body, 'fail', 'Choose a strong password');
      const changed = await client('post', 'new-password/', {
        emailOrUsername: user.username,
        password: STRONG_PASSWORD + '2',
        otp,
      }).expect(200);
      expectAccountAnswer(changed.body, 'success', 'Password Change Successful');
    });
  });

  describe('sessions and targets pages', () => {
    let user: SignedInUser;

    interface ClientTarget {
      id: number;
      target_url: string;
      host_ip: unknown;
      max_user_rank: number;
      max_owtf_rank: number;
    }

    /** TargetsPage/saga.ts getTargets: `targets.data`, mapped over by TargetsTable. */
    const targetsOfPage = async () => {
      const response = await client('get', 'targets/', null, user.token).expect(200);
      expect(response.body.status).toBe('success');
      expect(Array.isArray(response.body.data)).toBe(true);
      return response.body.data as ClientTarget[];
    };
    /** Sessions/saga.ts getSessions: `sessions.data`; the page finds the one with `active`. */
    const sessionsOfPage = async () => {
      const response = await client('get', 'sessions/', null, user.token).expect(200);
      return response.body.data as Array<{ id: number; name: string; active: boolean }>;
    };
    const activeSession = async () => (await sessionsOfPage()).find((session) => session.active);

    beforeAll(async () => {
      user = await signUpAs(t, smtp, 'webtargets');
    });

    it('a first target makes and activates `default session`, and the page lists that session’s targets', async () => {
      expect(await targetsOfPage()).toEqual([]);
      expect(await sessionsOfPage()).toEqual([]);

      // TargetsPage/saga.ts postTarget: `{target_url}`; the page adds http:// and https:// variants.
      const created = await client('post', 'targets/', { target_url: 'http://shop.example' }, user.token);
      expect(created.status).toBe(201);
      await client('post', 'targets/', { target_url: 'https://shop.example' }, user.token).expect(201);
      const session = await activeSession();
      expect(session).toEqual({ id: expect.any(Number), name: 'default session', active: true });

      const targets = await targetsOfPage();
      expect(targets.map((target) => target.target_url)).toEqual([
        'http://shop.example/',
        'https://shop.example/',
      ]);
      for (const target of targets) {
        // TargetsTable: the id (links, checkboxes), `target_url (host_ip)`, and the severity
        // from max_user_rank and max_owtf_rank (-1: no findings).
        expect(target).toMatchObject({
          id: expect.any(Number),
          host_ip: null,
          max_user_rank: -1,
          max_owtf_rank: -1,
        });
      }
      expect(created.body.data).toEqual(targets[0]);
      const detail = await client('get', `sessions/${session!.id}`, null, user.token).expect(200);
      expect(detail.body.data.targets).toEqual(targets.map((target) => target.id));
    });

    it('a new session starts empty; its targets are the page’s until another is activated', async () => {
      const before = await targetsOfPage();
      // Sessions/saga.ts postSession `{name}`, then patchSession: PATCH sessions/<id>/activate/ without a body.
      await client('post', 'sessions/', { name: 'second' }, user.token).expect(201);
      const second = (await sessionsOfPage()).find((session) => session.name === 'second')!;
      expect(second.active).toBe(true);
      expect(await targetsOfPage()).toEqual([]);

      const joined = await client('post', 'targets/', { target_url: 'http://second.example/' }, user.token);
      expect(joined.status).toBe(201);
      // A URL the user has in another session joins this one as it is.
      const again = await client('post', 'targets/', { target_url: before[0].target_url }, user.token);
      expect([again.status, again.body.data.id]).toEqual([201, before[0].id]);
      expect((await targetsOfPage()).map((target) => target.id)).toEqual(
        [joined.body.data.id as number, before[0].id].sort((a, b) => a - b),
      );
      // ... but not twice into the same session.
      const twice = await client('post', 'targets/', { target_url: before[0].target_url }, user.token);
      expect([twice.status, twice.body]).toEqual([409, { status: 'fail', message: 'Target already exists' }]);

      const first = (await sessionsOfPage()).find((session) => session.name === 'default session')!;
      const activated = await client('patch', `sessions/${first.id}/activate/`, null, user.token).expect(200);
      expect(activated.body).toEqual({ status: 'success', data: null });
      expect(await targetsOfPage()).toEqual(before);

      // TargetsPage/saga.ts removeTargetFromSession: PATCH sessions/<id>/remove/ `{target_id}`.
      await client('patch', `sessions/${first.id}/remove/`, { target_id: before[1].id }, user.token).expect(
        200,
      );
      expect(await targetsOfPage()).toEqual([before[0]]);
      // deleteTarget: DELETE targets/<id>/.
      await client('delete', `targets/${before[0].id}/`, null, user.token).expect(200);
      expect(await targetsOfPage()).toEqual([]);
    });

    it('pages through query parameters, the count in X-Total-Count', async () => {
      const pager = await signUpAs(t, smtp, 'webpager');
      for (const n of [1, 2, 3]) {
        await client('post', 'targets/', { target_url: `http://p${n}.example/` }, pager.token).expect(201);
      }
      const page = await client('get', 'targets/?limit=2&offset=1', null, pager.token).expect(200);
      expect(page.headers['x-total-count']).toBe('3');
      expect(page.body.data.map((target: ClientTarget) => target.target_url)).toEqual([
        'http://p2.example/',
        'http://p3.example/',
      ]);
    });

    it('a deleted active session leaves the page empty until a target activates `default session` again', async () => {
      const owner = await signUpAs(t, smtp, 'webdefault');
      await client('post', 'targets/', { target_url: 'http://one.example/' }, owner.token).expect(201);
      const sessions = (await client('get', 'sessions/', null, owner.token).expect(200)).body.data;
      await client('post', 'sessions/', { name: 'other' }, owner.token).expect(201);
      const other = (await client('get', 'sessions/', null, owner.token)).body.data.find(
        (session: { name: string }) => session.name === 'other',
      );
      await client('delete', `sessions/${other.id}/`, null, owner.token).expect(200);
      expect((await client('get', 'targets/', null, owner.token).expect(200)).body.data).toEqual([]);
      await client('post', 'targets/', { target_url: 'http://two.example/' }, owner.token).expect(201);
      const after = (await client('get', 'sessions/', null, owner.token).expect(200)).body.data;
      expect(after).toEqual([{ ...sessions[0], active: true }]);
      expect(
        (await client('get', 'targets/', null, owner.token).expect(200)).body.data.map(
          (target: ClientTarget) => target.target_url,
        ),
      ).toEqual(['http://one.example/', 'http://two.example/']);
    });
  });

  describe('marketplace', () => {
    let author: SignedInUser;
    let other: SignedInUser;
    let chief: SignedInUser;

    const membersOf = (value: object) => Object.keys(value).sort();

    /** A marketplace card: name, version, tags and the review state from approval_status. */
    const card = (plugin: Record<string, unknown>) => ({
      name: plugin.name,
      version: plugin.version,
      tags: plugin.tags,
      approval_status: plugin.approval_status,
      status: plugin.status,
    });

    /** No answer ever carries a path, the source or a secret. */
    const expectNoLeak = (body: unknown) => {
      const text = JSON.stringify(body);
      for (const word of ['file_path', 'source_code', 'password', 'otp_secret', 'community-plugins/', '.py"'])
        expect([word, text.includes(word)]).toEqual([word, false]);
    };

    beforeAll(async () => {
      author = await signUpAs(t, smtp, 'webauthor');
      other = await signUpAs(t, smtp, 'webother');
      // An admin through SVC_ADMIN_EMAILS (chief@example.com).
      chief = await signUpAs(t, smtp, 'chief');
    });

    const uploadWith = (name: string, extra: Record<string, string>, file?: Buffer) =>
      upload(t, author.token, { fields: { ...validFields(name), ...extra }, file });

    it('takes version and tags on upload and shows them, with approval_status, in every view', async () => {
      const uploaded = await uploadWith('Card plugin', { version: '2.3.1', tags: 'XSS, headers,xss' });
      expect(uploaded.status).toBe(201);
      const plugin = uploaded.body.data as Record<string, unknown>;
      expect(membersOf(plugin)).toEqual(OWNER_MEMBERS);
      expect(card(plugin)).toEqual({
        name: 'Card plugin',
        version: '2.3.1',
        tags: ['xss', 'headers'],
        approval_status: 'pending',
        status: 'pending',
      });

      // Repeated parts, and no version: 1.0.0.
      let repeated = t
        .http()
        .post('/api/v1/community-plugins/upload')
        .set('Authorization', `Bearer ${author.token}`);
      for (const [key, value] of Object.entries(validFields('Repeated tags')))
        repeated = repeated.field(key, value);
      repeated = repeated.field('tags', 'recon').field('tags', 'web.app,osint');
      const second = await repeated.attach(
        'plugin_file',
        Buffer.from('DESCRIPTION = "Repeated tags"\n\n\ndef run(PluginInfo):\n    return []\n'),
        { filename: 'repeated.py', contentType: 'text/x-python' },
      );
      expect(second.status).toBe(201);
      expect(card(second.body.data)).toMatchObject({ version: '1.0.0', tags: ['recon', 'web.app', 'osint'] });

      const id = plugin.id as number;
      const get = (user: SignedInUser, path: string) =>
        t.http().get(`/api/v1/community-plugins/${path}`).set('Authorization', `Bearer ${user.token}`);

      // Pending: the owner's detail (owner view) and the admin's (admin view).
      const ownerDetail = (await get(author, `${id}/`).expect(200)).body.data;
      expect([membersOf(ownerDetail), card(ownerDetail)]).toEqual([OWNER_MEMBERS, card(plugin)]);
      const adminDetail = (await get(chief, `${id}/`).expect(200)).body.data;
      expect([membersOf(adminDetail), card(adminDetail)]).toEqual([ADMIN_MEMBERS, card(plugin)]);

      // The admin review queue is a page like every plugin list.
      const queue = (await get(chief, '?status=pending').expect(200)).body.data;
      expect(membersOf(queue)).toEqual(['limit', 'offset', 'plugins', 'total']);
      expect(queue.plugins.map(card)).toContainEqual(card(plugin));

      // The admin reads the source, then approves without a body, as the web client does.
      const approved = await readThenApprove(t, chief.token, id).expect(200);
      expect(card(approved.body.data)).toEqual({
        ...card(plugin),
        approval_status: 'approved',
        status: 'approved',
      });

      // Approved: the public view for others, in the detail and the catalogue.
      const publicDetail = (await get(other, `${id}/`).expect(200)).body.data;
      expect([membersOf(publicDetail), card(publicDetail)]).toEqual([
        PUBLIC_MEMBERS,
        card(approved.body.data),
      ]);
      const catalogue = (await get(other, '').expect(200)).body.data;
      const listed = catalogue.plugins.find((entry: { id: number }) => entry.id === id);
      expect([membersOf(listed), card(listed)]).toEqual([PUBLIC_MEMBERS, card(approved.body.data)]);
      const adminCatalogue = (await get(chief, '').expect(200)).body.data;
      const adminListed = adminCatalogue.plugins.find((entry: { id: number }) => entry.id === id);
      expect([membersOf(adminListed), card(adminListed)]).toEqual([ADMIN_MEMBERS, card(approved.body.data)]);

      for (const body of [
        uploaded.body,
        second.body,
        ownerDetail,
        adminDetail,
        queue,
        approved.body,
        catalogue,
      ])
        expectNoLeak(body);
    });

    it('filters the catalogue by tag, in any case, a whole tag only', async () => {
      const get = (query: string) =>
        t.http().get(`/api/v1/community-plugins/?${query}`).set('Authorization', `Bearer ${chief.token}`);
      const ids: Record<string, number> = {};
      for (const [name, tags] of [
        ['Tag alpha', 'sql_injection,web'],
        ['Tag beta', 'sqlxinjection'],
        ['Tag gamma', 'web-app'],
      ]) {
        const response = await uploadWith(name, { tags });
        expect(response.status).toBe(201);
        ids[name] = response.body.data.id;
        await readThenApprove(t, chief.token, ids[name]).expect(200);
      }
      const names = async (query: string) =>
        ((await get(query).expect(200)).body.data.plugins as Array<{ name: string }>)
          .map((p) => p.name)
          .sort();
      expect(await names('tag=SQL_Injection')).toEqual(['Tag alpha']);
      expect(await names('tag=web')).toEqual(['Tag alpha']);
      expect(await names('tag=web-app')).toEqual(['Tag gamma']);
      expect(await names('tag=injection')).toEqual([]);
      expect(await names('tag=web&q=alpha')).toEqual(['Tag alpha']);
      const page = (await get('tag=web').expect(200)).body.data;
      expect([page.total, page.limit, page.offset]).toEqual([1, 50, 0]);
      const bad = await get('tag=no%20spaces');
      expect([bad.status, bad.body]).toEqual([
        400,
        {
          status: 'fail',
          message: 'Invalid query parameters',
          errors: { tag: 'must be a tag of 1 to 32 letters, digits, ".", "_", "+" or "-"' },
        },
      ]);
    });

    it('answers mine/ as a page with rejection reasons, limit and offset like the catalogue', async () => {
      const uploader = await signUpAs(t, smtp, 'webmine');
      const names = ['Mine one', 'Mine two', 'Mine three'];
      const ids: number[] = [];
      for (const name of names) {
        t.clock.advance(1000);
        const response = await upload(t, uploader.token, {
          fields: { ...validFields(name), version: '0.9', tags: 'mine' },
        });
        expect(response.status).toBe(201);
        ids.push(response.body.data.id);
      }
      await t
        .http()
        .post(`/api/v1/community-plugins/${ids[0]}/reject/`)
        .set('Authorization', `Bearer ${chief.token}`)
        .send({ reason: 'Needs a timeout' })
        .expect(200);
      const mine = (query = '') =>
        t
          .http()
          .get(`/api/v1/community-plugins/mine/${query}`)
          .set('Authorization', `Bearer ${uploader.token}`);

      const page = (await mine().expect(200)).body;
      expect(page.status).toBe('success');
      expect(membersOf(page.data)).toEqual(['limit', 'offset', 'plugins', 'total']);
      expect([page.data.total, page.data.limit, page.data.offset]).toEqual([3, 50, 0]);
      // "My plugins": each card with its review state and, when rejected, the reason.
      expect(
        page.data.plugins.map((plugin: Record<string, unknown>) => [
          plugin.name,
          plugin.version,
          plugin.tags,
          plugin.approval_status,
          plugin.rejection_reason,
        ]),
      ).toEqual([
        ['Mine three', '0.9', ['mine'], 'pending', null],
        ['Mine two', '0.9', ['mine'], 'pending', null],
        ['Mine one', '0.9', ['mine'], 'rejected', 'Needs a timeout'],
      ]);
      for (const plugin of page.data.plugins) expect(membersOf(plugin)).toEqual(OWNER_MEMBERS);
      expectNoLeak(page);

      const second = (await mine('?limit=1&offset=1').expect(200)).body.data;
      expect([
        second.total,
        second.limit,
        second.offset,
        second.plugins.map((p: { id: number }) => p.id),
      ]).toEqual([3, 1, 1, [ids[1]]]);
      const bad = await mine('?limit=0&offset=x');
      expect([bad.status, bad.body]).toEqual([
        400,
        {
          status: 'fail',
          message: 'Invalid query parameters',
          errors: { limit: 'must be an integer of at least 1', offset: 'must be an integer of at least 0' },
        },
      ]);
    });

    it('refuses a bad version or bad tags with Invalid plugin metadata, the findings also under data', async () => {
      const cases: Array<[Record<string, string>, Record<string, string>]> = [
        [
          { version: 'latest' },
          { version: 'must be a version such as 1.0.0 or 2.1-beta, at most 32 characters' },
        ],
        [
          { tags: Array.from({ length: 11 }, (_, i) => `t${i}`).join(',') },
          { tags: 'must be at most 10 tags' },
        ],
        [
          { tags: 'fine,not fine' },
          {
            tags: 'each tag must be 1 to 32 letters, digits, ".", "_", "+" or "-", starting with a letter or digit',
          },
        ],
        [
          { author: '', version: '1.0.0.0.0', tags: 'x'.repeat(33) },
          {
            author: 'is required',
            version: 'must be a version such as 1.0.0 or 2.1-beta, at most 32 characters',
            tags: 'each tag must be 1 to 32 letters, digits, ".", "_", "+" or "-", starting with a letter or digit',
          },
        ],
      ];
      for (const [fields, errors] of cases) {
        const response = await uploadWith('Bad metadata', fields);
        expect([response.status, response.body]).toEqual([
          400,
          {
            status: 'fail',
            message: 'Invalid plugin metadata',
            errors,
            // What the Upload tab renders: the lines of text the validator's refusals use.
            data: { errors: Object.entries(errors).map(([field, why]) => `${field}: ${why}`) },
          },
        ]);
      }
    });

    it('gives the validator findings under data as text (errors) and as objects (findings)', async () => {
      const response = await uploadWith('Hostile card', {}, HOSTILE_SOURCE);
      expect(response.status).toBe(422);
      expect(response.body).toEqual({
        status: 'fail',
        message: 'Plugin failed validation',
        errors: expect.arrayContaining([
          { rule: 'forbidden-import', message: expect.any(String), line: 1, column: expect.any(Number) },
        ]),
        data: { errors: expect.any(Array), findings: response.body.errors },
      });
      // The client's Upload tab renders each entry of data.errors as text, as the original server sent it.
      const findings = response.body.errors as Array<{
        rule: string;
        message: string;
        line: number;
        column: number;
      }>;
      expect(response.body.data.errors).toEqual(
        findings.map((f) => `line ${f.line}, column ${f.column}: ${f.message} (${f.rule})`),
      );
      expectNoLeak(response.body);
    });
  });
});
