import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { fail } from './helpers/envelopes';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';
import {
  benignPlugin,
  benignPluginOfSize,
  BENIGN_SOURCE,
  HOSTILE_SOURCE,
  pluginState,
  SignedInUser,
  OWNER_VIEW_KEYS,
  signUpAs,
  upload,
  validFields,
} from './helpers/marketplace';

const MAX_SIZE = 4096;

/** The validator's finding for HOSTILE_SOURCE (`import os` on line 1). */
const OS_FINDING = {
  rule: 'forbidden-import',
  message:
    "Module 'os' is not in the plugin profile: a plugin neither touches files nor runs commands itself: use the framework's helpers (plugin_helper.CommandDump with a resource list)",
  line: 1,
  column: 8,
};

/**
 * 400 `Invalid plugin metadata`: `errors` per field at the top, and the same findings under
 * `data.errors` as the lines of text the validator's refusals use (`name: must be 3 to 128 characters`).
 */
const invalid = (errors: Record<string, string>) => ({
  ...fail('Invalid plugin metadata', errors),
  data: { errors: Object.entries(errors).map(([field, why]) => `${field}: ${why}`) },
});

describe('community plugins: upload', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let boss: SignedInUser;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({
      smtp,
      env: {
        SVC_ADMIN_EMAILS: 'boss@example.com',
        PLUGIN_UPLOAD_MAX_SIZE: String(MAX_SIZE),
        // These tests upload many plugins as one user; the cap has its own tests.
        PLUGIN_MAX_PENDING_PER_USER: '1000',
      },
    });
    alice = await signUpAs(t, smtp, 'alice');
    boss = await signUpAs(t, smtp, 'boss');
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });
  afterEach(() => t.clock.reset());

  /** Runs a failing upload and proves it left neither row nor file. */
  async function expectRefused(
    call: () => request.Test,
    status: number,
    body: ReturnType<typeof fail>,
  ): Promise<void> {
    const before = await pluginState(t);
    const response = await call();
    expect({ status: response.status, body: response.body as unknown }).toEqual({ status, body });
    expect(await pluginState(t)).toEqual(before);
  }

  describe('success', () => {
    it('answers 201 with the owner view of a pending plugin and stores the file under a random name, mode 0640', async () => {
      const before = await pluginState(t);
      const response = await upload(t, alice.token, {
        fields: { ...validFields('  Title finder  '), execution_timeout: '60' },
        filename: 'title_finder.py',
      });
      expect(response.status).toBe(201);
      const data = (response.body as { data: Record<string, unknown> }).data;
      expect(response.body).toEqual({ status: 'success', data: expect.any(Object) });
      expect(Object.keys(data).sort()).toEqual(OWNER_VIEW_KEYS);
      expect(data).toEqual({
        id: expect.any(Number),
        name: 'Title finder',
        description: 'The   Title finder   plugin',
        group: 'web',
        type: 'passive',
        author: 'Alice Example',
        status: 'pending',
        approval_status: 'pending',
        version: '1.0.0',
        tags: [],
        sha256: createHash('sha256').update(BENIGN_SOURCE).digest('hex'),
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        updated_at: data.created_at,
        rejection_reason: null,
        user_id: alice.id,
        rating: 0,
        ratings_count: 0,
      });

      const after = await pluginState(t);
      expect(after.rows).toBe(before.rows + 1);
      const added = after.files.filter((file) => !before.files.includes(file));
      expect(added).toEqual([expect.stringMatching(/^title_finder_[0-9a-f]{16}\.py$/)]);
      const stored = join(t.config.communityPluginDir, added[0]);
      expect(readFileSync(stored)).toEqual(BENIGN_SOURCE);
      expect(statSync(stored).mode & 0o777).toBe(0o640);
      expect(statSync(t.config.communityPluginDir).mode & 0o777).toBe(0o750);

      const [row] = (await t.dataSource.query(
        'SELECT file_path, execution_timeout, status, sha256 FROM user_plugins WHERE id = ?',
        [data.id],
      )) as Array<Record<string, unknown>>;
      expect({ ...row, execution_timeout: Number(row.execution_timeout) }).toEqual({
        file_path: added[0],
        execution_timeout: 60,
        status: 'pending',
        sha256: data.sha256,
      });
    });

    it('gives the owner view to an admin uploader too, and the default execution timeout of 300 s', async () => {
      const response = await upload(t, boss.token, {
        fields: validFields('Admin upload'),
        file: benignPlugin('admin'),
      });
      expect(response.status).toBe(201);
      const data = (response.body as { data: Record<string, unknown> }).data;
      expect(Object.keys(data).sort()).toEqual(OWNER_VIEW_KEYS);
      const [row] = (await t.dataSource.query('SELECT execution_timeout FROM user_plugins WHERE id = ?', [
        data.id,
      ])) as Array<{
        execution_timeout: unknown;
      }>;
      expect(Number(row.execution_timeout)).toBe(300);
    });

    it('never lets the client file name choose the path', async () => {
      const before = await pluginState(t);
      const response = await upload(t, alice.token, {
        fields: validFields('Path games'),
        file: benignPlugin('path games'),
        filename: '../../etc/evil name!.py',
      });
      expect(response.status).toBe(201);
      const added = (await pluginState(t)).files.filter((file) => !before.files.includes(file));
      expect(added).toEqual([expect.stringMatching(/^evil_name_[0-9a-f]{16}\.py$/)]);
      for (const [filename, pattern] of [
        ['..\\..\\windows\\system32.py', /^system32_[0-9a-f]{16}\.py$/],
        ['.py', /^plugin_[0-9a-f]{16}\.py$/],
        ['ÄÖÜ.PY', /^plugin_[0-9a-f]{16}\.py$/],
      ] as const) {
        const again = await pluginState(t);
        const stored = await upload(t, alice.token, {
          fields: validFields(`Path ${filename}`),
          file: benignPlugin(filename),
          filename,
        });
        expect(stored.status).toBe(201);
        expect((await pluginState(t)).files.filter((file) => !again.files.includes(file))).toEqual([
          expect.stringMatching(pattern),
        ]);
      }
    });

    it('reads the text parts whether they come before or after the file', async () => {
      const response = await upload(t, alice.token, {
        fields: validFields('Fields last'),
        file: benignPlugin('fields last'),
        fieldsLast: true,
      });
      expect(response.status).toBe(201);
      expect((response.body as { data: { name: string } }).data.name).toBe('Fields last');
    });

    it('accepts a file of exactly PLUGIN_UPLOAD_MAX_SIZE bytes', async () => {
      const response = await upload(t, alice.token, {
        fields: validFields('Exactly max'),
        file: benignPluginOfSize(MAX_SIZE),
      });
      expect(response.status).toBe(201);
    });
  });

  describe('failures, in the spec order, each leaving neither row nor file', () => {
    it('400 when there is no file part, or no multipart body at all', async () => {
      const noFile = fail('No plugin_file provided');
      await expectRefused(
        () => {
          let call = t
            .http()
            .post('/api/v1/community-plugins/upload')
            .set('Authorization', `Bearer ${alice.token}`);
          for (const [key, value] of Object.entries(validFields('No file'))) call = call.field(key, value);
          return call;
        },
        400,
        noFile,
      );
      await expectRefused(
        () =>
          t
            .http()
            .post('/api/v1/community-plugins/upload')
            .set('Authorization', `Bearer ${alice.token}`)
            .send({ ...validFields('Json'), plugin_file: BENIGN_SOURCE.toString() }),
        400,
        noFile,
      );
      await expectRefused(
        () => t.http().post('/api/v1/community-plugins/upload').set('Authorization', `Bearer ${alice.token}`),
        400,
        noFile,
      );
    });

    it('400 `Only .py files are accepted` for any other extension, before size, metadata, name and validator', async () => {
      const refused = fail('Only .py files are accepted');
      for (const filename of [
        'title_finder.txt',
        'title_finder.py.txt',
        'title_finder',
        'py',
        'title_finder.pyc',
      ]) {
        await expectRefused(() => upload(t, alice.token, { filename }), 400, refused);
      }
      // Too large, bad metadata, a taken name and hostile code too: the extension decides first.
      await upload(t, alice.token, { fields: validFields('Taken name'), file: benignPlugin('taken') }).expect(
        201,
      );
      await expectRefused(
        () =>
          upload(t, alice.token, {
            filename: 'huge.txt',
            file: Buffer.alloc(MAX_SIZE * 4, 'a'),
            fields: { ...validFields('Taken name'), group: 'nope' },
          }),
        400,
        refused,
      );
      await expectRefused(
        () =>
          upload(t, alice.token, {
            filename: 'x.sh',
            file: HOSTILE_SOURCE,
            fields: validFields('Taken name'),
          }),
        400,
        refused,
      );
    });

    it('413 when the file is larger than the limit, before metadata, name and validator', async () => {
      const tooLarge = fail(`Plugin file exceeds maximum size of ${MAX_SIZE} bytes`);
      await expectRefused(
        () => upload(t, alice.token, { file: benignPluginOfSize(MAX_SIZE + 1) }),
        413,
        tooLarge,
      );
      await expectRefused(
        () =>
          upload(t, alice.token, {
            file: Buffer.concat([HOSTILE_SOURCE, Buffer.alloc(MAX_SIZE * 3, '#')]),
            fields: { ...validFields('Taken name'), group: 'nope', name: '' },
          }),
        413,
        tooLarge,
      );
      await expectRefused(
        () =>
          upload(t, alice.token, {
            file: benignPluginOfSize(MAX_SIZE + 1),
            fields: validFields('x'),
            fieldsLast: true,
          }),
        413,
        tooLarge,
      );
    });

    it('answers a body that goes on far past the limit with 413 too, and closes the connection', async () => {
      const before = await pluginState(t);
      const response = await upload(t, alice.token, { file: Buffer.alloc(3 * 1024 * 1024, '#') });
      expect([response.status, response.body]).toEqual([
        413,
        fail(`Plugin file exceeds maximum size of ${MAX_SIZE} bytes`),
      ]);
      expect(response.headers.connection).toBe('close');
      expect(await pluginState(t)).toEqual(before);
    });

    it('400 `Invalid plugin metadata` with one message per field', async () => {
      const cases: Array<[Record<string, string>, Record<string, string>]> = [
        [
          {},
          {
            name: 'is required',
            description: 'is required',
            group: 'is required',
            type: 'is required',
            author: 'is required',
          },
        ],
        [{ ...validFields('ab') }, { name: 'must be 3 to 128 characters' }],
        [{ ...validFields('  ab  ') }, { name: 'must be 3 to 128 characters' }],
        [{ ...validFields('x'.repeat(129)) }, { name: 'must be 3 to 128 characters' }],
        [
          { ...validFields('Bell\u0007name'), description: 'plain' },
          { name: 'must not contain control characters' },
        ],
        [
          { ...validFields('Bidi\u202ename'), description: 'plain' },
          { name: 'must not contain control characters' },
        ],
        [{ ...validFields('Ok name'), description: '   ' }, { description: 'is required' }],
        [
          { ...validFields('Ok name'), description: 'd'.repeat(2001) },
          { description: 'must be 1 to 2000 characters' },
        ],
        [
          { ...validFields('Ok name'), description: 'nul\u0000byte' },
          { description: 'must not contain control characters' },
        ],
        [{ ...validFields('Ok name'), author: 'a'.repeat(129) }, { author: 'must be 1 to 128 characters' }],
        [
          { ...validFields('Ok name'), author: 'tab\tauthor' },
          { author: 'must not contain control characters' },
        ],
        [{ ...validFields('Ok name'), group: 'Web' }, { group: 'must be one of web, network, auxiliary' }],
        [
          { ...validFields('Ok name'), type: 'semi-passive' },
          { type: 'must be one of active, passive, semi_passive, external, grep' },
        ],
        [
          { ...validFields('Ok name'), execution_timeout: '9' },
          { execution_timeout: 'must be an integer from 10 to 900' },
        ],
        [
          { ...validFields('Ok name'), execution_timeout: '901' },
          { execution_timeout: 'must be an integer from 10 to 900' },
        ],
        [
          { ...validFields('Ok name'), execution_timeout: '30.5' },
          { execution_timeout: 'must be an integer from 10 to 900' },
        ],
        [
          { ...validFields('ab'), group: 'x', type: 'y', author: '' },
          {
            name: 'must be 3 to 128 characters',
            group: 'must be one of web, network, auxiliary',
            type: 'must be one of active, passive, semi_passive, external, grep',
            author: 'is required',
          },
        ],
      ];
      for (const [fields, errors] of cases) {
        await expectRefused(() => upload(t, alice.token, { fields }), 400, invalid(errors));
      }
      // Metadata comes before the name and the validator.
      await expectRefused(
        () =>
          upload(t, alice.token, {
            fields: { ...validFields('Taken name'), group: 'x' },
            file: HOSTILE_SOURCE,
          }),
        400,
        invalid({ group: 'must be one of web, network, auxiliary' }),
      );
      // A field given twice is refused, not silently merged.
      await expectRefused(
        () =>
          t
            .http()
            .post('/api/v1/community-plugins/upload')
            .set('Authorization', `Bearer ${alice.token}`)
            .field('name', 'One name')
            .field('name', 'Two names')
            .field('description', 'd')
            .field('group', 'web')
            .field('type', 'grep')
            .field('author', 'a')
            .attach('plugin_file', BENIGN_SOURCE, 'twice.py'),
        400,
        invalid({ name: 'must be given once' }),
      );
    });

    it('accepts line breaks and tabs in a description, and the boundary lengths of every field', async () => {
      const response = await upload(t, alice.token, {
        fields: {
          name: 'n'.repeat(128),
          description: `line one\r\nline\ttwo${'d'.repeat(1980)}`,
          group: 'auxiliary',
          type: 'semi_passive',
          author: 'a'.repeat(128),
          execution_timeout: '900',
        },
        file: benignPlugin('boundaries'),
      });
      expect(response.status).toBe(201);
      const short = await upload(t, alice.token, {
        fields: {
          name: 'abc',
          description: 'd',
          group: 'network',
          type: 'grep',
          author: 'a',
          execution_timeout: '10',
        },
        file: benignPlugin('short'),
      });
      expect(short.status).toBe(201);
    });

    it('409 `Plugin name already exists` for a taken name, compared without case, before the validator', async () => {
      const exists = fail('Plugin name already exists');
      await expectRefused(() => upload(t, alice.token, { fields: validFields('Taken name') }), 409, exists);
      await expectRefused(() => upload(t, boss.token, { fields: validFields('  TAKEN NAME ') }), 409, exists);
      await expectRefused(
        () => upload(t, alice.token, { fields: validFields('taken name'), file: HOSTILE_SOURCE }),
        409,
        exists,
      );
    });

    it('422 `Plugin failed validation` with the validator violations as errors', async () => {
      await expectRefused(
        () =>
          upload(t, alice.token, {
            fields: validFields('Shell runner'),
            file: HOSTILE_SOURCE,
            filename: 'shell_runner.py',
          }),
        422,
        {
          ...fail('Plugin failed validation', [OS_FINDING]),
          data: {
            errors: [`line 1, column 8: ${OS_FINDING.message} (forbidden-import)`],
            findings: [OS_FINDING],
          },
        } as unknown as ReturnType<typeof fail>,
      );
      const missing = await upload(t, alice.token, {
        fields: validFields('No description'),
        file: Buffer.from('def run(PluginInfo):\n    return []\n'),
      });
      expect(missing.status).toBe(422);
      expect(
        (missing.body as { errors: Array<{ rule: string }> }).errors.map((violation) => violation.rule),
      ).toEqual(['missing-description']);
    });

    it('400 for a second file, or a file in another part', async () => {
      const oneFile = fail('Only one file, in part plugin_file, is accepted');
      await expectRefused(
        () =>
          upload(t, alice.token, { fields: validFields('Two files'), file: benignPlugin('two') }).attach(
            'plugin_file',
            BENIGN_SOURCE,
            'second.py',
          ),
        400,
        oneFile,
      );
      await expectRefused(
        () =>
          t
            .http()
            .post('/api/v1/community-plugins/upload')
            .set('Authorization', `Bearer ${alice.token}`)
            .attach('file', BENIGN_SOURCE, 'plugin.py'),
        400,
        oneFile,
      );
    });

    it('400 `Malformed request body` for a broken multipart body', async () => {
      await expectRefused(
        () =>
          t
            .http()
            .post('/api/v1/community-plugins/upload')
            .set('Authorization', `Bearer ${alice.token}`)
            .set('Content-Type', 'multipart/form-data; boundary=xyz')
            .send(
              '--xyz\r\nContent-Disposition: form-data; name="plugin_file"; filename="a.py"\r\n\r\nDESCRIPTION',
            ),
        400,
        fail('Malformed request body'),
      );
    });

    it('401 without a token, before anything of the body is looked at', async () => {
      await expectRefused(
        () => t.http().post('/api/v1/community-plugins/upload').attach('plugin_file', BENIGN_SOURCE, 'x.txt'),
        401,
        fail('Unauthorized'),
      );
    });

    it('lets exactly one of several racing uploads of one name through, leaving one row and one file', async () => {
      const before = await pluginState(t);
      // Four: as many as one uploader may have at the validator at once (two running, two waiting).
      const responses = await Promise.all(
        Array.from({ length: 4 }, (_, index) =>
          upload(t, alice.token, {
            fields: validFields(index % 2 === 0 ? 'Racing name' : 'RACING NAME'),
            file: benignPlugin(`race ${index}`),
          }).then((response) => response),
        ),
      );
      const statuses = responses.map((response) => response.status).sort();
      expect(statuses).toEqual([201, 409, 409, 409]);
      for (const response of responses.filter((candidate) => candidate.status === 409)) {
        expect(response.body).toEqual(fail('Plugin name already exists'));
      }
      const after = await pluginState(t);
      expect(after.rows).toBe(before.rows + 1);
      expect(after.files.filter((file) => !before.files.includes(file))).toHaveLength(1);
      expect(after.files.filter((file) => !file.endsWith('.py'))).toEqual([]);
    });
  });
});
