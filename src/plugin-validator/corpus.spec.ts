import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { MAX_SOURCE_LINES } from './rules';
import { closeSharedValidator, validate } from './validator';

const FIXTURES = path.join(__dirname, '../../test/fixtures/plugins');
const HOSTILE_DIR = path.join(FIXTURES, 'hostile');
const BENIGN_DIR = path.join(FIXTURES, 'benign');
const OUTSIDE_DIR = path.join(FIXTURES, 'outside-profile');
const PROFILE_DOC = path.join(__dirname, '../../docs/plugin-profile.md');

/** hostile/expected.json maps each file to the rule that must be among its violations. */
const expectedRules = JSON.parse(readFileSync(path.join(HOSTILE_DIR, 'expected.json'), 'utf8')) as Record<
  string,
  string
>;
const hostileFiles = readdirSync(HOSTILE_DIR).filter((name) => name.endsWith('.py'));
const benignFiles = readdirSync(BENIGN_DIR).filter((name) => name.endsWith('.py'));
const outsideFiles = readdirSync(OUTSIDE_DIR).filter((name) => name.endsWith('.py'));

/** The rule ids docs/plugin-profile.md documents: its `### \`rule-id\`` headings. */
const documentedRules = new Set(
  [...readFileSync(PROFILE_DOC, 'utf8').matchAll(/^### `([a-z-]+)`$/gm)].map((match) => match[1]),
);

/** Every finding names a documented rule, at a line and column, with a message saying what to write instead. */
function expectDocumentedFindings(
  violations: Array<{ rule: string; message: string; line: number; column: number }>,
) {
  for (const violation of violations) {
    expect(documentedRules).toContain(violation.rule);
    expect(violation.line).toBeGreaterThanOrEqual(1);
    expect(violation.column).toBeGreaterThanOrEqual(1);
    expect(violation.message.length).toBeGreaterThan(20);
  }
}
const minimalPlugin = readFileSync(path.join(BENIGN_DIR, 'main_guard.py'));

const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');

/** Encoding tricks that need bytes a text fixture cannot hold (or that editors would fix). */
const generatedHostile: Array<[name: string, bytes: Buffer, rule: string]> = [
  [
    'UTF-16LE with BOM',
    Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(minimalPlugin.toString(), 'utf16le')]),
    'encoding',
  ],
  [
    'UTF-16BE with BOM',
    Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(minimalPlugin.toString(), 'utf16le').swap16()]),
    'encoding',
  ],
  ['UTF-32LE with BOM', Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0x00]), Buffer.alloc(8)]), 'encoding'],
  ['a NUL byte', Buffer.concat([minimalPlugin, utf8('x = 1\0\n')]), 'encoding'],
  ['invalid UTF-8', Buffer.concat([minimalPlugin, Buffer.from([0x23, 0xff, 0x0a])]), 'encoding'],
  [
    'an overlong UTF-8 encoding',
    Buffer.concat([minimalPlugin, Buffer.from([0x23, 0xc0, 0xaf, 0x0a])]),
    'encoding',
  ],
  [
    'a UTF-8 BOM with a latin-1 declaration',
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8('# coding: latin-1\n'), minimalPlugin]),
    'encoding',
  ],
  [
    'an import hidden after a lone CR in a comment',
    Buffer.concat([utf8('# harmless comment\rimport os\n'), minimalPlugin]),
    'forbidden-import',
  ],
  [
    'an eval hidden after a lone CR in a comment',
    Buffer.concat([minimalPlugin, utf8('# harmless comment\reval("1")\n')]),
    'forbidden-name',
  ],
  [
    // CPython's compile() reads the cookie line as line 3 and runs UTF-8; tokenize.detect_encoding
    // (and the tools built on it) reads it as line 2 and decodes another program.
    'a coding declaration that is on line 2 only for readers splitting at \\n',
    Buffer.concat([
      utf8('#!/usr/bin/env python3\r# note\n# vim: set fileencoding=utf-16 :\n'),
      minimalPlugin,
    ]),
    'encoding',
  ],
  [
    `more than ${MAX_SOURCE_LINES} lines`,
    Buffer.concat([minimalPlugin, utf8('x = 1\n'.repeat(MAX_SOURCE_LINES))]),
    'too-large',
  ],
];

const generatedBenign: Array<[name: string, bytes: Buffer]> = [
  ['with a UTF-8 BOM', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), minimalPlugin])],
  ['with CRLF line endings', utf8(minimalPlugin.toString().replace(/\n/g, '\r\n'))],
];

afterAll(() => closeSharedValidator());

describe('plugin corpus', () => {
  it('has at least 450 hostile, 56 benign and 89 ordinary plugins outside the profile', () => {
    expect(hostileFiles.length).toBeGreaterThanOrEqual(450);
    expect(benignFiles.length).toBeGreaterThanOrEqual(56);
    expect(outsideFiles.length).toBeGreaterThanOrEqual(89);
  });

  it('records an expected rule for exactly the hostile files present', () => {
    expect(Object.keys(expectedRules).sort()).toEqual([...hostileFiles].sort());
  });

  describe('hostile', () => {
    it.each(hostileFiles)('rejects %s with its expected rule', async (name) => {
      const result = await validate(readFileSync(path.join(HOSTILE_DIR, name)));
      expect(result.ok).toBe(false);
      expect(result.violations.map((violation) => violation.rule)).toContain(expectedRules[name]);
      expectDocumentedFindings(result.violations);
    });

    it.each(generatedHostile)('rejects a plugin with %s', async (_name, bytes, rule) => {
      const result = await validate(bytes);
      expect(result.ok).toBe(false);
      expect(result.violations.map((violation) => violation.rule)).toContain(rule);
    });
  });

  describe('ordinary plugins outside the profile', () => {
    // Ordinary code the profile refuses on purpose (requests, threads, asyncio, open, library
    // bases, decorators, private attributes, ...): refused, each finding a documented rule.
    it.each(outsideFiles)('refuses %s with documented rules', async (name) => {
      const result = await validate(readFileSync(path.join(OUTSIDE_DIR, name)));
      expect(result.ok).toBe(false);
      expectDocumentedFindings(result.violations);
    });
  });

  describe('benign', () => {
    it.each(benignFiles)('accepts %s', async (name) => {
      await expect(validate(readFileSync(path.join(BENIGN_DIR, name)))).resolves.toEqual({
        ok: true,
        violations: [],
      });
    });

    it.each(generatedBenign)('accepts a plugin %s', async (_name, bytes) => {
      await expect(validate(bytes)).resolves.toEqual({ ok: true, violations: [] });
    });
  });
});
