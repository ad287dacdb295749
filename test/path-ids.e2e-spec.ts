import { benignPlugin, signUpAs, SignedInUser, upload, validFields } from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';

/**
 * Every path reads its id with the same rule (ParseIdPipe): decimal digits without a
 * leading zero. An id spelled any other way names nothing, so each route answers it
 * exactly as it answers an id that names no row.
 */
describe('ids in paths', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let sessionId: number;
  let targetId: number;
  let pluginId: number;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp });
    alice = await signUpAs(t, smtp, 'idreader');
    await call('post', 'sessions/').send({ name: 'Ids' }).expect(201);
    sessionId = (await call('get', 'sessions/').expect(200)).body.data[0].id as number;
    targetId = (await call('post', 'targets/').send({ target_url: 'http://ids.example/' }).expect(201)).body
      .data.id as number;
    const uploaded = await upload(t, alice.token, { fields: validFields('Id reader'), file: benignPlugin() });
    pluginId = (uploaded.body as { data: { id: number } }).data.id;
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  function call(method: 'get' | 'post' | 'delete', path: string) {
    return t.http()[method](`/api/v1/${path}`).set('Authorization', `Bearer ${alice.token}`);
  }
  const answer = async (method: 'get' | 'delete', path: string) => {
    const response = await call(method, path);
    return { status: response.status, body: response.body as unknown };
  };

  it.each([
    ['get', 'sessions/', '', () => sessionId],
    ['delete', 'sessions/', '', () => sessionId],
    ['get', 'community-plugins/', '/', () => pluginId],
    ['get', 'targets/', '', () => targetId],
  ] as const)(
    '%s %s<id>%s: a leading zero names nothing, like an unknown id',
    async (method, prefix, suffix, id) => {
      const unknown = await answer(method, `${prefix}999999${suffix}`);
      expect(unknown.status).toBeGreaterThanOrEqual(400);
      for (const spelling of [`00${id()}`, `0${id()}`, '007', '01']) {
        expect([spelling, await answer(method, `${prefix}${spelling}${suffix}`)]).toEqual([
          spelling,
          unknown,
        ]);
      }
    },
  );

  it('answers `/sessions/007` and `/community-plugins/007` as the unknown id each route refuses', async () => {
    expect(await answer('get', 'sessions/007')).toEqual({
      status: 400,
      body: { status: 'fail', message: 'Invalid session id provided' },
    });
    expect(await answer('get', 'community-plugins/007/')).toEqual({
      status: 404,
      body: { status: 'fail', message: 'Plugin not found' },
    });
  });

  it('still finds each row under its own spelling', async () => {
    expect((await answer('get', `sessions/${sessionId}`)).status).toBe(200);
    expect((await answer('get', `community-plugins/${pluginId}/`)).status).toBe(200);
    expect((await answer('get', `targets/${targetId}`)).status).toBe(200);
  });
});
