import { decodeSource, firstInvalidUtf8Offset } from './encoding';
import { MAX_SOURCE_BYTES, MAX_SOURCE_LINES } from './rules';

const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');

describe('decodeSource', () => {
  it('returns the text of plain UTF-8 source', () => {
    expect(decodeSource(utf8('x = "é"\n'))).toEqual({ ok: true, text: 'x = "é"\n' });
  });

  it('strips a UTF-8 byte-order mark', () => {
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8('x = 1\n')]);
    expect(decodeSource(withBom)).toEqual({ ok: true, text: 'x = 1\n' });
  });

  it.each([
    ['UTF-16LE', [0xff, 0xfe, 0x78, 0x00]],
    ['UTF-16BE', [0xfe, 0xff, 0x00, 0x78]],
    ['UTF-32LE', [0xff, 0xfe, 0x00, 0x00, 0x78, 0x00, 0x00, 0x00]],
    ['UTF-32BE', [0x00, 0x00, 0xfe, 0xff, 0x00, 0x00, 0x00, 0x78]],
  ])('rejects a %s byte-order mark', (name, bytes) => {
    expect(decodeSource(Buffer.from(bytes))).toEqual({
      ok: false,
      violations: [
        {
          rule: 'encoding',
          message: `${name} byte-order mark: plugins must be UTF-8`,
          line: 1,
          column: 1,
        },
      ],
    });
  });

  it('rejects a NUL byte and says where it is', () => {
    expect(decodeSource(utf8('x = 1\ny = "a\0b"\n'))).toEqual({
      ok: false,
      violations: [{ rule: 'encoding', message: 'NUL byte in source', line: 2, column: 7 }],
    });
  });

  it.each([
    ['a lone continuation byte', [0x78, 0x80]],
    ['an invalid lead byte', [0x78, 0xff]],
    ['an overlong slash', [0xc0, 0xaf]],
    ['a UTF-16 surrogate', [0xed, 0xa0, 0x80]],
    ['a truncated sequence', [0x78, 0xe2, 0x82]],
    ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
  ])('rejects %s as invalid UTF-8', (_label, bytes) => {
    const result = decodeSource(Buffer.concat([utf8('ok = 1\n'), Buffer.from(bytes)]));
    expect(result).toMatchObject({
      ok: false,
      violations: [{ rule: 'encoding', message: 'Source is not valid UTF-8', line: 2 }],
    });
  });

  it.each(['utf-8', 'utf8', 'UTF-8', 'utf_8', 'UTF8'])('accepts a %s coding declaration', (name) => {
    expect(decodeSource(utf8(`# -*- coding: ${name} -*-\nx = 1\n`)).ok).toBe(true);
  });

  it.each([
    ['# -*- coding: utf-7 -*-\n', 'utf-7', 1],
    ['# coding=latin-1\n', 'latin-1', 1],
    ['#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\n', 'cp1252', 2],
    ['#!/usr/bin/env python\n# coding: utf-8-sig\n', 'utf-8-sig', 2],
  ])('rejects the coding declaration in %j', (header, name, line) => {
    expect(decodeSource(utf8(`${header}x = 1\n`))).toEqual({
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

  it('ignores coding comments after line 2, as Python does', () => {
    expect(decodeSource(utf8('x = 1\ny = 2\n# coding: latin-1\n')).ok).toBe(true);
  });

  it('turns CR and CRLF into LF so a lone CR cannot hide code in a comment', () => {
    expect(decodeSource(utf8('# note\rimport os\r\nx = 1\r\n'))).toEqual({
      ok: true,
      text: '# note\nimport os\nx = 1\n',
    });
  });

  it(`accepts ${MAX_SOURCE_LINES} lines and rejects one more`, () => {
    expect(decodeSource(utf8('x = 1\n'.repeat(MAX_SOURCE_LINES))).ok).toBe(true);
    expect(decodeSource(utf8('x = 1\n'.repeat(MAX_SOURCE_LINES) + 'y = 2'))).toEqual({
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

  it('rejects sources over the byte limit before decoding them', () => {
    const result = decodeSource(Buffer.alloc(MAX_SOURCE_BYTES + 1, 0x20));
    expect(result).toMatchObject({ ok: false, violations: [{ rule: 'too-large', line: 1 }] });
  });
});

describe('firstInvalidUtf8Offset', () => {
  it('returns the length for valid input and the offset of the first bad sequence otherwise', () => {
    expect(firstInvalidUtf8Offset(utf8('aé😀'))).toBe(7);
    expect(firstInvalidUtf8Offset(Buffer.from([0x61, 0xc3, 0xa9, 0xc3, 0x28]))).toBe(3);
  });
});
