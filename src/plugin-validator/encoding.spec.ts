import { MAX_SOURCE_BYTES, MAX_SOURCE_LINES } from './rules';
import { closeSharedValidator, validate } from './validator';

const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');
const PLUGIN = 'DESCRIPTION = "Test plugin"\n\ndef run(PluginInfo):\n    return None\n';

afterAll(() => closeSharedValidator());

/**
 * CPython decodes the bytes itself, so what it runs is what the rules judged; these refusals keep
 * the text an admin reads the same as that program (one encoding, no hidden bytes).
 */
describe('the encoding refusals', () => {
  it('accepts plain UTF-8, with a BOM or CRLF line endings', async () => {
    await expect(validate(utf8(`x = "é"\n${PLUGIN}`))).resolves.toEqual({ ok: true, violations: [] });
    await expect(validate(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8(PLUGIN)]))).resolves.toEqual({
      ok: true,
      violations: [],
    });
    await expect(validate(utf8(PLUGIN.replace(/\n/g, '\r\n')))).resolves.toEqual({
      ok: true,
      violations: [],
    });
  });

  it.each([
    ['UTF-16LE', [0xff, 0xfe, 0x78, 0x00]],
    ['UTF-16BE', [0xfe, 0xff, 0x00, 0x78]],
    ['UTF-32LE', [0xff, 0xfe, 0x00, 0x00, 0x78, 0x00, 0x00, 0x00]],
    ['UTF-32BE', [0x00, 0x00, 0xfe, 0xff, 0x00, 0x00, 0x00, 0x78]],
  ])('rejects a %s byte-order mark', async (name, bytes) => {
    await expect(validate(Buffer.from(bytes))).resolves.toEqual({
      ok: false,
      violations: [
        { rule: 'encoding', message: `${name} byte-order mark: plugins must be UTF-8`, line: 1, column: 1 },
      ],
    });
  });

  it('rejects a NUL byte and says where it is', async () => {
    await expect(validate(utf8('x = 1\ny = "a\0b"\n'))).resolves.toEqual({
      ok: false,
      violations: [{ rule: 'encoding', message: 'NUL byte in source', line: 2, column: 7 }],
    });
  });

  it('says where a NUL byte is in code points, after non-ASCII text and a lone CR', async () => {
    await expect(validate(utf8('x = 1\ry = "é\0"\n'))).resolves.toEqual({
      ok: false,
      violations: [{ rule: 'encoding', message: 'NUL byte in source', line: 2, column: 7 }],
    });
  });

  it.each(['202A', '202B', '202C', '202D', '202E', '2066', '2067', '2068', '2069'])(
    'rejects the bidirectional control U+%s anywhere ("Trojan Source"), saying where it is',
    async (hex) => {
      const source = `${PLUGIN}# é ${String.fromCodePoint(parseInt(hex, 16))} hidden\n`;
      await expect(validate(utf8(source))).resolves.toEqual({
        ok: false,
        violations: [
          {
            rule: 'encoding',
            message: `Bidirectional control character U+${hex}: it reorders how the source is shown, so a reviewer would read another program`,
            line: 5,
            column: 5,
          },
        ],
      });
    },
  );

  it.each([
    ['a lone continuation byte', [0x78, 0x80]],
    ['an invalid lead byte', [0x78, 0xff]],
    ['an overlong slash', [0xc0, 0xaf]],
    ['a UTF-16 surrogate', [0xed, 0xa0, 0x80]],
    ['a truncated sequence', [0x78, 0xe2, 0x82]],
    ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
  ])('rejects %s as invalid UTF-8', async (_label, bytes) => {
    const result = await validate(Buffer.concat([utf8('ok = 1\n'), Buffer.from(bytes)]));
    expect(result).toMatchObject({
      ok: false,
      violations: [{ rule: 'encoding', message: 'Source is not valid UTF-8', line: 2 }],
    });
  });

  it.each(['utf-8', 'utf8', 'UTF-8', 'utf_8', 'UTF8'])('accepts a %s coding declaration', async (name) => {
    await expect(validate(utf8(`# -*- coding: ${name} -*-\n${PLUGIN}`))).resolves.toEqual({
      ok: true,
      violations: [],
    });
  });

  it.each([
    ['# -*- coding: utf-7 -*-\n', 'utf-7', 1],
    ['# coding=latin-1\n', 'latin-1', 1],
    ['#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\n', 'cp1252', 2],
    ['#!/usr/bin/env python\n# coding: utf-8-sig\n', 'utf-8-sig', 2],
  ])('rejects the coding declaration in %j', async (header, name, line) => {
    await expect(validate(utf8(`${header}${PLUGIN}`))).resolves.toEqual({
      ok: false,
      violations: [
        {
          rule: 'encoding',
          message: `Coding declaration '${name}' is not allowed: plugins must be UTF-8`,
          line,
          column: 1,
        },
      ],
    });
  });

  it('ignores coding comments after line 2, as Python does', async () => {
    await expect(validate(utf8(`x = 1\ny = 2\n# coding: latin-1\n${PLUGIN}`))).resolves.toEqual({
      ok: true,
      violations: [],
    });
  });

  it('reads a lone CR as CPython does: code after it in a "comment" is code', async () => {
    const result = await validate(utf8(`# note\rimport os\n${PLUGIN}`));
    expect(result.violations).toEqual([
      {
        rule: 'forbidden-import',
        message:
          "Module 'os' is not in the plugin profile: a plugin neither touches files nor runs commands itself: use the framework's helpers (plugin_helper.CommandDump with a resource list)",
        line: 2,
        column: 8,
      },
    ]);
  });

  it(`accepts ${MAX_SOURCE_LINES} lines and rejects one more`, async () => {
    const filler = 'x = 1\n'.repeat(MAX_SOURCE_LINES - 4);
    await expect(validate(utf8(filler + PLUGIN))).resolves.toEqual({ ok: true, violations: [] });
    await expect(validate(utf8(`${filler}${PLUGIN}y = 2`))).resolves.toEqual({
      ok: false,
      violations: [
        {
          rule: 'too-large',
          message: `Plugin has ${MAX_SOURCE_LINES + 1} lines; the limit is ${MAX_SOURCE_LINES}`,
          line: MAX_SOURCE_LINES + 1,
          column: 1,
        },
      ],
    });
  });

  it('rejects sources over the byte limit before decoding them', async () => {
    const result = await validate(Buffer.alloc(MAX_SOURCE_BYTES + 1, 0x20));
    expect(result).toMatchObject({ ok: false, violations: [{ rule: 'too-large', line: 1 }] });
  });
});
