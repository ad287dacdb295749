import { validateMetadata } from './plugin-metadata';

const valid = {
  name: 'Title finder',
  description: 'Finds titles',
  group: 'web',
  type: 'grep',
  author: 'Alice',
};

describe('validateMetadata', () => {
  it('trims text fields and defaults the execution timeout to 300 seconds', () => {
    expect(validateMetadata({ ...valid, name: '  Title finder \n', author: ' Alice ' })).toEqual({
      ok: true,
      metadata: { ...valid, executionTimeout: 300, version: '1.0.0', tags: [] },
    });
  });

  it('counts characters, not bytes or UTF-16 units', () => {
    expect(validateMetadata({ ...valid, name: '😀'.repeat(128) }).ok).toBe(true);
    expect(validateMetadata({ ...valid, name: '😀'.repeat(129) })).toEqual({
      ok: false,
      errors: { name: 'must be 3 to 128 characters' },
    });
    expect(validateMetadata({ ...valid, name: 'ééé' }).ok).toBe(true);
  });

  it('refuses control and invisible formatting characters, but allows line breaks and tabs in a description', () => {
    for (const name of ['a\u0000bc', 'ab\u007fc', 'ab\u0085c', 'ab\u200bc', 'ab\u2066c', 'a\nbc']) {
      expect(validateMetadata({ ...valid, name })).toEqual({
        ok: false,
        errors: { name: 'must not contain control characters' },
      });
    }
    expect(validateMetadata({ ...valid, description: 'one\r\n\ttwo' }).ok).toBe(true);
    for (const description of ['a\u0000b', 'a\u001bb', 'a\u202eb']) {
      expect(validateMetadata({ ...valid, description })).toEqual({
        ok: false,
        errors: { description: 'must not contain control characters' },
      });
    }
  });

  it('accepts execution_timeout from 10 to 900 and refuses anything else', () => {
    for (const [raw, seconds] of [
      ['10', 10],
      ['900', 900],
      [' 45 ', 45],
      ['', 300],
    ] as const) {
      expect(validateMetadata({ ...valid, execution_timeout: raw })).toEqual({
        ok: true,
        metadata: { ...valid, executionTimeout: seconds, version: '1.0.0', tags: [] },
      });
    }
    for (const raw of ['9', '901', '-10', '1e2', '0x10', '10.0', 'ten', '00000000010']) {
      expect(validateMetadata({ ...valid, execution_timeout: raw })).toEqual({
        ok: false,
        errors: { execution_timeout: 'must be an integer from 10 to 900' },
      });
    }
  });

  it('refuses repeated and non-text fields, and reports errors in form order', () => {
    expect(validateMetadata({ ...valid, author: ['a', 'b'], name: { x: '1' }, group: 'Web' })).toEqual({
      ok: false,
      errors: {
        name: 'must be text',
        group: 'must be one of web, network, auxiliary',
        author: 'must be given once',
      },
    });
    expect(Object.keys((validateMetadata({}) as { errors: object }).errors)).toEqual([
      'name',
      'description',
      'group',
      'type',
      'author',
    ]);
  });

  it('takes an optional short version, 1.0.0 when absent or empty', () => {
    for (const version of ['1.0.0', '2.1', '10', 'v3.0.1', '1.0.0-beta.2', '1.2.3+build.7', ' 1.4 ']) {
      expect(validateMetadata({ ...valid, version })).toMatchObject({
        ok: true,
        metadata: { version: version.trim() },
      });
    }
    expect(validateMetadata({ ...valid, version: '' })).toMatchObject({
      ok: true,
      metadata: { version: '1.0.0' },
    });
    for (const version of [
      'latest',
      '1..0',
      '1.0.0.0.0',
      '.1',
      '1.0-',
      '1.0.0-' + 'x'.repeat(21),
      '1 0',
      ['1', '2'],
    ]) {
      expect(validateMetadata({ ...valid, version })).toEqual({
        ok: false,
        errors: {
          version: Array.isArray(version)
            ? 'must be given once'
            : 'must be a version such as 1.0.0 or 2.1-beta, at most 32 characters',
        },
      });
    }
  });

  it('takes up to 10 tags, comma-separated or repeated, trimmed, lower-cased, without repeats', () => {
    expect(validateMetadata({ ...valid, tags: ' XSS, headers ,,xss' })).toMatchObject({
      ok: true,
      metadata: { tags: ['xss', 'headers'] },
    });
    expect(validateMetadata({ ...valid, tags: ['sqli', 'web.app,Recon'] })).toMatchObject({
      ok: true,
      metadata: { tags: ['sqli', 'web.app', 'recon'] },
    });
    expect(validateMetadata({ ...valid, tags: '' })).toMatchObject({ ok: true, metadata: { tags: [] } });
    const eleven = Array.from({ length: 11 }, (_, i) => `t${i}`);
    expect(validateMetadata({ ...valid, tags: eleven.join(',') })).toEqual({
      ok: false,
      errors: { tags: 'must be at most 10 tags' },
    });
    expect(validateMetadata({ ...valid, tags: eleven.slice(0, 10) }).ok).toBe(true);
    for (const tags of ['has space', '-dash', 'x'.repeat(33), 'émile', 'a;b']) {
      expect(validateMetadata({ ...valid, tags })).toEqual({
        ok: false,
        errors: {
          tags: 'each tag must be 1 to 32 letters, digits, ".", "_", "+" or "-", starting with a letter or digit',
        },
      });
    }
    expect(validateMetadata({ ...valid, tags: { a: 1 } })).toEqual({
      ok: false,
      errors: { tags: 'must be text' },
    });
  });
});
