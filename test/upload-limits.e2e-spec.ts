import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';
import {
  benignPlugin,
  benignPluginOfSize,
  pluginState,
  SignedInUser,
  signUpAs,
  upload,
  validFields,
  readThenApprove,
} from './helpers/marketplace';

type View = Record<string, unknown>;
const data = (response: { body: { data: View } }) => response.body.data;

/** Fair uploads: per-user rate and pending cap, a validator shared fairly, and reviews that stay private. */
describe('upload limits', () => {
  const smtp = new SmtpSink();
  beforeAll(() => smtp.start());
  afterAll(() => smtp.stop());

  describe('reviews', () => {
    let t: TestApp;
    let alice: SignedInUser;
    let boss: SignedInUser;
    beforeAll(async () => {
      t = await createTestApp({ smtp, env: { SVC_ADMIN_EMAILS: 'boss@example.com' } });
      alice = await signUpAs(t, smtp, 'alice');
      boss = await signUpAs(t, smtp, 'boss');
    });
    afterAll(() => t.close());

    /** What the uploader sees of the plugin, alone and in the list of its own uploads. */
    const views = async (id: number) => {
      const get = (path: string) =>
        t.http().get(`/api/v1/community-plugins/${path}`).set('Authorization', `Bearer ${alice.token}`);
      const mine = ((await get('mine/').expect(200)).body.data.plugins as View[]).find(
        (plugin) => plugin.id === id,
      )!;
      return { public: data(await get(`${id}/`).expect(200)), owner: mine };
    };

    it.each([
      ['approve', {}, { status: 'approved', approval_status: 'approved' }],
      [
        'reject',
        { reason: 'Needs tests' },
        { status: 'rejected', approval_status: 'rejected', rejection_reason: 'Needs tests' },
      ],
    ])(
      '%s changes nothing in the public and owner views but the status (and the reason)',
      async (action, body, change) => {
        const created = await upload(t, alice.token, {
          fields: validFields(`Reviewed ${action}`),
          file: benignPlugin(`Reviewed ${action}`),
        }).expect(201);
        const id = data(created).id as number;
        const before = await views(id);
        t.clock.advance(90_000);
        // An admin approves what they read (a reject needs no read, and a read changes no view).
        await t
          .http()
          .get(`/api/v1/community-plugins/${id}/source/`)
          .set('Authorization', `Bearer ${boss.token}`)
          .expect(200);
        await t
          .http()
          .post(`/api/v1/community-plugins/${id}/${action}/`)
          .set('Authorization', `Bearer ${boss.token}`)
          .send(body)
          .expect(200);
        const after = await views(id);
        expect(after.owner).toEqual({ ...before.owner, ...change });
        expect(after.public).toEqual({ ...before.public, ...change });
        t.clock.reset();
      },
    );
  });

  describe('pending cap', () => {
    const CAP = 2;
    let t: TestApp;
    let carol: SignedInUser;
    let boss: SignedInUser;
    beforeAll(async () => {
      t = await createTestApp({
        smtp,
        env: { SVC_ADMIN_EMAILS: 'boss@example.com', PLUGIN_MAX_PENDING_PER_USER: String(CAP) },
      });
      carol = await signUpAs(t, smtp, 'carol');
      boss = await signUpAs(t, smtp, 'boss');
    });
    afterAll(() => t.close());

    it(`keeps at most ${CAP} plugins of a user pending, also when 8 are uploaded at once`, async () => {
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          upload(t, carol.token, { fields: validFields(`Capped ${i}`), file: benignPlugin(`Capped ${i}`) }),
        ),
      );
      expect(answers.filter((answer) => answer.status === 201)).toHaveLength(CAP);
      // At least four get past the validator queue (two threads, two waiting), so the cap
      // itself refuses some; the others were told the validator is busy.
      const refusals = answers.filter((answer) => answer.status !== 201).map((answer) => answer.body);
      expect(refusals).toContainEqual({ status: 'fail', message: 'Too many pending plugins' });
      for (const refusal of refusals) {
        expect([
          { status: 'fail', message: 'Too many pending plugins' },
          { status: 'fail', message: 'Validator is busy' },
        ]).toContainEqual(refusal);
      }
      const state = await pluginState(t);
      expect([state.rows, state.files.length]).toEqual([CAP, CAP]);

      // A review makes room again.
      const first = data(answers.find((answer) => answer.status === 201)!).id as number;
      await readThenApprove(t, boss.token, first).expect(200);
      await upload(t, carol.token, {
        fields: validFields('Capped again'),
        file: benignPlugin('again'),
      }).expect(201);
    });
  });

  describe('uploads at once', () => {
    const UPLOADERS = 12;
    let t: TestApp;
    let uploaders: SignedInUser[];
    beforeAll(async () => {
      t = await createTestApp({ smtp });
      uploaders = [];
      for (let i = 0; i < UPLOADERS; i += 1) uploaders.push(await signUpAs(t, smtp, `busy${i}`));
    });
    afterAll(() => t.close());

    it(`queues ${UPLOADERS} valid uploads sent at once by ${UPLOADERS} users and accepts every one`, async () => {
      const answers = await Promise.all(
        uploaders.map((uploader, i) =>
          upload(t, uploader.token, {
            fields: validFields(`At once ${i}`),
            file: benignPlugin(`At once ${i}`),
          }),
        ),
      );
      expect(answers.map((answer) => [answer.status, answer.body.status])).toEqual(
        uploaders.map(() => [201, 'success']),
      );
      const state = await pluginState(t);
      expect([state.rows, state.files.length]).toEqual([UPLOADERS, UPLOADERS]);
    });
  });

  describe('rate and fairness', () => {
    let t: TestApp;
    let flooder: SignedInUser;
    let bystander: SignedInUser;
    beforeAll(async () => {
      t = await createTestApp({ smtp, env: { RATE_LIMIT: 'on', PLUGIN_UPLOADS_PER_HOUR: '40' } });
      flooder = await signUpAs(t, smtp, 'flooder');
      bystander = await signUpAs(t, smtp, 'bystander');
    });
    afterAll(() => t.close());

    it("keeps another user's valid upload working while one user floods the validator with 30 uploads of 250 KB", async () => {
      const big = (i: number) => {
        const file = benignPluginOfSize(250_000);
        // Its own bytes, so each has its own hash; the size stays the same.
        file.write(`#${String(i).padStart(4, '0')}`, file.length - 8);
        return file;
      };
      const flood = Array.from({ length: 30 }, (_, i) =>
        upload(t, flooder.token, { fields: validFields(`Flood ${i}`), file: big(i) }),
      );
      const own = upload(t, bystander.token, {
        fields: validFields('Bystander plugin'),
        file: benignPlugin('Bystander'),
      });
      const [floodAnswers, ownAnswer] = await Promise.all([Promise.all(flood), own]);

      expect([ownAnswer.status, ownAnswer.body.status]).toEqual([201, 'success']);
      const statuses = floodAnswers.map((answer) => answer.status);
      // Judged and accepted, turned away by the pending cap, or told to come back: never
      // 422 for a valid file, never a 500.
      expect(statuses.every((status) => [201, 409, 503].includes(status))).toBe(true);
      expect(statuses).toContain(201);
      for (const busy of floodAnswers.filter((answer) => answer.status === 503)) {
        expect(busy.body).toEqual({ status: 'fail', message: 'Validator is busy' });
        expect(Number(busy.headers['retry-after'])).toBeGreaterThan(0);
      }
      const accepted = statuses.filter((status) => status === 201).length;
      const state = await pluginState(t);
      expect(state.rows).toBe(accepted + 1);
      expect(state.files.filter((file) => file.endsWith('.py'))).toHaveLength(accepted + 1);
      expect(state.files).toHaveLength(accepted + 1);
    });

    it('limits upload attempts per user per hour with 429 and Retry-After, before reading the body', async () => {
      const user = await signUpAs(t, smtp, 'hasty');
      for (let i = 0; i < 40; i += 1) {
        // Refused by the validator: no row, no pending plugin, but an attempt.
        await upload(t, user.token, {
          fields: validFields(`Hasty ${i}`),
          file: Buffer.from('import os\n'),
        }).expect(422);
      }
      const refused = await upload(t, user.token, { fields: validFields('Hasty last') });
      expect([refused.status, refused.body]).toEqual([429, { status: 'fail', message: 'Too many requests' }]);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3000);
      // Another user is not affected.
      await upload(t, bystander.token, {
        fields: validFields('Bystander second'),
        file: benignPlugin('second'),
      }).expect(201);
    });
  });
});
