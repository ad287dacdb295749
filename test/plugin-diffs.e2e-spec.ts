import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DiffPool } from '../src/community-plugins/review/diff-pool';
import { fail } from './helpers/envelopes';
import {
  benignPlugin,
  readThenApprove,
  signUpAs,
  upload,
  validFields,
  type SignedInUser,
} from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, type TestApp } from './helpers/test-app';

jest.setTimeout(180_000);

type Row = Record<string, unknown>;
const dataOf = <T = Row>(response: { body: unknown }) => (response.body as { data: T }).data;

/** With benignPlugin's 5 lines, the validator's limit of 20,000 lines. */
const LINES = 19_995;
/** A valid plugin of 20,000 short lines (about 240 KB, under the 256 KB upload limit). */
const longPlugin = (line: (index: number) => string, lines = LINES) =>
  Buffer.concat([
    benignPlugin('Long'),
    Buffer.from(Array.from({ length: lines }, (_, index) => `${line(index)}\n`).join('')),
  ]);
const original = longPlugin((i) => `x_${String(i).padStart(5, '0')} = 1`);
/** Every tenth line changed: 2,000 changes spread over the whole file. */
const scattered = longPlugin((i) =>
  i % 10 === 3 ? `y_${String(i).padStart(5, '0')} = 2` : `x_${String(i).padStart(5, '0')} = 1`,
);
/** Nothing in common with `original` but the head: the diff's work budget runs out. */
const unrelated = longPlugin((i) => `z_${String((i * 7919) % 100_000).padStart(5, '0')} = 3`);

/** GNU diff -u of two texts under the given labels. */
function gnuDiff(before: Buffer, after: Buffer, labels: [string, string]): string {
  const dir = mkdtempSync(join(tmpdir(), 'diff-'));
  try {
    writeFileSync(join(dir, 'a'), before);
    writeFileSync(join(dir, 'b'), after);
    execFileSync('diff', ['-u', '--label', labels[0], '--label', labels[1], 'a', 'b'], { cwd: dir });
    return '';
  } catch (error) {
    return (error as { stdout: Buffer }).stdout.toString();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Alice's plugin approved by boss at 1.0.0 with `first`, and 1.1.0 waiting with `second`. */
async function pluginWithUpdate(
  t: TestApp,
  [alice, boss]: [SignedInUser, SignedInUser],
  name: string,
  first: Buffer,
  second: Buffer,
): Promise<number> {
  const created = await upload(t, alice.token, { fields: validFields(name), file: first }).expect(201);
  const id = dataOf<{ id: number }>(created).id;
  await readThenApprove(t, boss.token, id).expect(200);
  await t
    .http()
    .post(`/api/v1/community-plugins/${id}/versions/`)
    .set('Authorization', `Bearer ${alice.token}`)
    .field('version', '1.1.0')
    .attach('plugin_file', second, { filename: 'update.py', contentType: 'text/x-python' })
    .expect(201);
  return id;
}

const bearer = (t: TestApp, user: SignedInUser) => (path: string) =>
  t.http().get(`/api/v1/community-plugins/${path}`).set('Authorization', `Bearer ${user.token}`);

describe('reviewers diff large versions off the event loop', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let boss: SignedInUser;
  const get = (path: string) => bearer(t, boss)(path);
  const pluginWithUpdateOf = (name: string, first: Buffer, second: Buffer) =>
    pluginWithUpdate(t, [alice, boss], name, first, second);

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({
      smtp,
      // One thread and no waiting room, so a second diff of another pair is refused at once.
      env: {
        SVC_ADMIN_EMAILS: 'boss@example.com',
        PLUGIN_DIFF_THREADS: '1',
        PLUGIN_DIFF_MAX_QUEUED: '0',
      },
    });
    alice = await signUpAs(t, smtp, 'alice');
    boss = await signUpAs(t, smtp, 'boss');
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  it('diffs 20,000 lines with 2,000 changes as GNU diff does, and the diff counts as the read for approve', async () => {
    const id = await pluginWithUpdateOf('Long scattered', original, scattered);
    const diff = dataOf(await get(`${id}/versions/1.1.0/diff/`).expect(200));
    expect(diff).toMatchObject({ version: '1.1.0', base_version: '1.0.0', approximate: false });
    expect(diff.diff).toBe(
      gnuDiff(original, scattered, ['a/Long scattered 1.0.0', 'b/Long scattered 1.1.0']),
    );
    // Read through the diff alone (no source/ fetched): approve accepts it.
    await t
      .http()
      .post(`/api/v1/community-plugins/${id}/approve/`)
      .set('Authorization', `Bearer ${boss.token}`)
      .expect(200);
  });

  it('shows an unrelated rewrite as removed and added, and says it is approximate', async () => {
    const id = await pluginWithUpdateOf('Long rewrite', original, unrelated);
    const diff = dataOf<{ diff: string; approximate: boolean }>(
      await get(`${id}/versions/1.1.0/diff/`).expect(200),
    );
    expect(diff.approximate).toBe(true);
    const body = diff.diff.split('\n');
    expect(body.filter((line) => line.startsWith('-x_'))).toHaveLength(LINES);
    expect(body.filter((line) => line.startsWith('+z_'))).toHaveLength(LINES);
  });

  it('computes the diff of one pair once for readers that ask at the same time', async () => {
    const id = await pluginWithUpdateOf(
      'Long shared',
      longPlugin((i) => `s_${String(i).padStart(5, '0')} = 1`),
      longPlugin((i) =>
        i % 7 === 0 ? `t_${String(i).padStart(5, '0')} = 1` : `s_${String(i).padStart(5, '0')} = 1`,
      ),
    );
    // One thread and no queue: a second computation while the first runs would be refused.
    const answers = await Promise.all(Array.from({ length: 8 }, () => get(`${id}/versions/1.1.0/diff/`)));
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    const bodies = new Set(answers.map((answer) => JSON.stringify(answer.body)));
    expect(bodies.size).toBe(1);
  });

  it('answers 503 with Retry-After while the diff threads have no room, and the diff once they have', async () => {
    const id = await pluginWithUpdateOf('Long waiting', scattered, original);
    // The one thread's turn held by another reader until this test lets it go: no timing.
    let release!: () => void;
    const turns = t.app.get(DiffPool)['queue'];
    const occupied = turns.run('someone else', () => new Promise<void>((done) => (release = done)));
    const busy = await get(`${id}/versions/1.1.0/diff/`).expect(503);
    expect(busy.body).toEqual(fail('Diff is busy'));
    expect(busy.headers['retry-after']).toBe('5');
    release();
    await occupied;
    expect(dataOf(await get(`${id}/versions/1.1.0/diff/`).expect(200))).toMatchObject({
      version: '1.1.0',
      approximate: false,
    });
  });
});

describe('eight diffs of different pairs at once, with the default settings', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let boss: SignedInUser;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({
      smtp,
      env: { SVC_ADMIN_EMAILS: 'boss@example.com', PLUGIN_MAX_PENDING_PER_USER: '100' },
    });
    alice = await signUpAs(t, smtp, 'alice');
    boss = await signUpAs(t, smtp, 'boss');
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  it('answers every one (sixteen files for the validator, eight diffs for two threads)', async () => {
    // Shorter files than above: what is tested is the queueing, and sixteen 20,000-line
    // validations on a busy machine could meet the validator's own time limit first.
    const lines = 2_000;
    const ids: number[] = [];
    for (let p = 0; p < 8; p += 1) {
      const name = (i: number, version: number) => `p${p}_${String(i).padStart(5, '0')} = ${version}`;
      ids.push(
        await pluginWithUpdate(
          t,
          [alice, boss],
          `Long ${p}`,
          longPlugin((i) => name(i, 1), lines),
          longPlugin((i) => name(i, i % 10 === p ? 2 : 1), lines),
        ),
      );
    }
    const answers = await Promise.all(ids.map((id) => bearer(t, boss)(`${id}/versions/1.1.0/diff/`)));
    expect(answers.map((answer) => answer.status)).toEqual(ids.map(() => 200));
    answers.forEach((answer, p) => {
      const { diff, approximate } = dataOf<{ diff: string; approximate: boolean }>(answer);
      expect(approximate).toBe(false);
      const changed = Array.from({ length: lines }, (_, i) => i).filter((i) => i % 10 === p);
      expect(diff.split('\n').filter((line) => line.startsWith('-p'))).toEqual(
        changed.map((i) => `-p${p}_${String(i).padStart(5, '0')} = 1`),
      );
    });
  });
});
