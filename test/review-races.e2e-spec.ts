import { SmtpSink } from './helpers/smtp-sink';
import type { TestApp } from './helpers/test-app';
import {
  benignPlugin,
  catalogueCounts,
  pluginFiles,
  SignedInUser,
  marketplaceApp,
  upload,
  validFields,
} from './helpers/marketplace';

type Action = 'approve' | 'reject' | 'delete';

/** The mixes of admin actions fired at one plugin at the same moment, each many times. */
const MIXES: Action[][] = [
  ['approve', 'delete'],
  ['reject', 'delete'],
  ['approve', 'reject'],
  ['approve', 'reject', 'delete'],
  ['approve', 'approve', 'delete', 'delete'],
  ['reject', 'reject', 'approve', 'delete'],
];
const ROUNDS = 12;

/**
 * Two admins acting on one plugin at once, over HTTP: every answer is a 2xx, 404 or 409, never
 * a 500, and what is left is consistent (a row with its file, or neither, and the catalogue's
 * kept counts equal to the rows counted).
 */
describe('community plugins: concurrent reviews', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let boss: SignedInUser;
  let chief: SignedInUser;

  beforeAll(async () => {
    await smtp.start();
    ({
      t,
      users: { alice, boss, chief },
    } = await marketplaceApp(smtp, ['alice', 'boss', 'chief']));
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  const send = (admin: SignedInUser, action: Action, id: number) => {
    const path = `/api/v1/community-plugins/${id}/${action}/`;
    const call = action === 'delete' ? t.http().delete(path) : t.http().post(path);
    call.set('Authorization', `Bearer ${admin.token}`);
    return action === 'reject' ? call.send({ reason: 'Not today' }) : call;
  };

  it.each(MIXES.map((mix) => [mix.join(' + '), mix]))(
    '%s: only 2xx, 404 or 409, and the row and its file stay together',
    async (_label, mix) => {
      const ids: number[] = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        const name = `Race ${mix.join('-')} ${round}`;
        const uploaded = await upload(t, alice.token, {
          fields: validFields(name),
          file: benignPlugin(name),
        });
        expect(uploaded.status).toBe(201);
        ids.push((uploaded.body as { data: { id: number } }).data.id);
      }

      // Each approving admin reads the source first, as approve requires (a read after a
      // rejection would be needed to re-approve: the approvals racing a rejection lose, 409).
      for (const id of ids) {
        for (const [index, action] of mix.entries()) {
          if (action !== 'approve') continue;
          await t
            .http()
            .get(`/api/v1/community-plugins/${id}/source/`)
            .set('Authorization', `Bearer ${(index % 2 === 0 ? boss : chief).token}`)
            .expect(200);
        }
      }

      // Every action on every plugin at once: the races are between the actions on one plugin,
      // and the neighbours' writes add the contention a busy database has.
      const [answers, uploads] = await Promise.all([
        Promise.all(
          ids.map((id) =>
            Promise.all(mix.map((action, index) => send(index % 2 === 0 ? boss : chief, action, id))),
          ),
        ),
        // Admins uploading meanwhile: the upload locks its uploader's row, a review checks its reviewer's.
        Promise.all(
          ids.map((id, round) =>
            upload(t, (round % 2 === 0 ? boss : chief).token, {
              fields: validFields(`Side ${mix.join('-')} ${round}`),
              file: benignPlugin(`side ${round}`),
            }),
          ),
        ),
      ]);
      for (const side of uploads) expect(side.status).toBe(201);

      for (const [round, id] of ids.entries()) {
        const roundAnswers = answers[round];
        for (const [index, answer] of roundAnswers.entries()) {
          const body = answer.body as { status: string };
          if (
            ![200, 404, 409].includes(answer.status) ||
            body.status !== (answer.status === 200 ? 'success' : 'fail')
          ) {
            throw new Error(`${mix[index]} answered ${answer.status} ${JSON.stringify(answer.body)}`);
          }
        }
        const rows = (await t.dataSource.query('SELECT status FROM user_plugins WHERE id = ?', [
          id,
        ])) as Array<{
          status: string;
        }>;
        const deleted = roundAnswers.some(
          (answer, index) => mix[index] === 'delete' && answer.status === 200,
        );
        expect(rows.length).toBe(deleted ? 0 : 1);
        // What is left is the status a winning review set (the upload's when none won), or nothing.
        const reviewed = roundAnswers
          .filter((answer, index) => mix[index] !== 'delete' && answer.status === 200)
          .map((answer) => (answer.body as { data: { status: string } }).data.status);
        const possible = deleted ? [null] : reviewed.length > 0 ? reviewed : ['pending'];
        expect(possible).toContain(rows[0]?.status ?? null);
      }
      await expectEveryRowWithItsFile();
      // The catalogue's kept sizes moved with every approval, revocation and delete that won.
      const { kept, counted } = await catalogueCounts(t);
      expect(kept).toEqual(counted);
    },
    120_000,
  );

  function listFiles(): string[] {
    return pluginFiles(t.config.communityPluginDir);
  }

  async function expectEveryRowWithItsFile(): Promise<void> {
    const rows = (await t.dataSource.query('SELECT file_path FROM user_plugins')) as Array<{
      file_path: string;
    }>;
    expect(listFiles().sort()).toEqual(rows.map((row) => row.file_path).sort());
  }
});
