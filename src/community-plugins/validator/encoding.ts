import { MAX_SOURCE_BYTES, MAX_SOURCE_LINES, Rule } from './rules';
import type { Violation } from './types';

export type DecodedSource = { ok: true; text: string } | { ok: false; violations: Violation[] };

const UTF8_BOM = [0xef, 0xbb, 0xbf];

/** Byte-order marks of encodings other than UTF-8; longest first so UTF-32 wins over UTF-16. */
const FOREIGN_BOMS: ReadonlyArray<{ name: string; bytes: readonly number[] }> = [
  { name: 'UTF-32LE', bytes: [0xff, 0xfe, 0x00, 0x00] },
  { name: 'UTF-32BE', bytes: [0x00, 0x00, 0xfe, 0xff] },
  { name: 'UTF-EBCDIC', bytes: [0xdd, 0x73, 0x66, 0x73] },
  { name: 'GB18030', bytes: [0x84, 0x31, 0x95, 0x33] },
  { name: 'UTF-1', bytes: [0xf7, 0x64, 0x4c] },
  { name: 'SCSU', bytes: [0x0e, 0xfe, 0xff] },
  { name: 'BOCU-1', bytes: [0xfb, 0xee, 0x28] },
  { name: 'UTF-16LE', bytes: [0xff, 0xfe] },
  { name: 'UTF-16BE', bytes: [0xfe, 0xff] },
];

/** PEP 263, as CPython's tokenizer matches it (also catches vim's `fileencoding=`). */
const CODING_DECLARATION = /^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)/;
const UTF8_SPELLINGS: ReadonlySet<string> = new Set(['utf-8', 'utf8']);

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Turns uploaded bytes into the exact text Python would compile, or rejects them.
 * Anything that could make Python read a different program than the one we check fails here.
 */
export function decodeSource(bytes: Uint8Array): DecodedSource {
  if (bytes.length > MAX_SOURCE_BYTES) {
    return reject(Rule.tooLarge, `Plugin is larger than ${MAX_SOURCE_BYTES} bytes`, 1, 1);
  }
  const foreignBom = FOREIGN_BOMS.find((bom) => startsWith(bytes, bom.bytes));
  if (foreignBom) {
    return reject(Rule.encoding, `${foreignBom.name} byte-order mark: plugins must be UTF-8`, 1, 1);
  }
  const body = startsWith(bytes, UTF8_BOM) ? bytes.subarray(UTF8_BOM.length) : bytes;

  const nulOffset = body.indexOf(0);
  if (nulOffset >= 0) {
    const { line, column } = bytePosition(body, nulOffset);
    return reject(Rule.encoding, 'NUL byte in source', line, column);
  }

  let decoded: string;
  try {
    decoded = strictUtf8.decode(body);
  } catch {
    const { line, column } = bytePosition(body, firstInvalidUtf8Offset(body));
    return reject(Rule.encoding, 'Source is not valid UTF-8', line, column);
  }

  // Python treats a lone CR as a line break; tree-sitter does not, so `# x\rimport os` would
  // hide an import inside a comment. Normalising keeps Python's line numbering.
  const text = decoded.replace(/\r\n?/g, '\n');
  const violations = checkCodingDeclarations(text);
  const lineCount = countLines(text);
  if (lineCount > MAX_SOURCE_LINES) {
    violations.push({
      rule: Rule.tooLarge,
      message: `Plugin has ${lineCount} lines; the limit is ${MAX_SOURCE_LINES}`,
      line: MAX_SOURCE_LINES + 1,
      column: 1,
    });
  }
  return violations.length > 0 ? { ok: false, violations } : { ok: true, text };
}

function checkCodingDeclarations(text: string): Violation[] {
  const violations: Violation[] = [];
  const firstLines = text.split('\n', 2);
  firstLines.forEach((lineText, index) => {
    const match = CODING_DECLARATION.exec(lineText);
    if (!match) return;
    const declared = match[1];
    if (UTF8_SPELLINGS.has(declared.toLowerCase().replace(/_/g, '-'))) return;
    violations.push({
      rule: Rule.encoding,
      message: `Coding declaration '${declared}' is not allowed: plugins must be UTF-8`,
      line: index + 1,
      column: match.index + 1,
    });
  });
  return violations;
}

function countLines(text: string): number {
  if (text.length === 0) return 0;
  let newlines = 0;
  for (let index = text.indexOf('\n'); index >= 0; index = text.indexOf('\n', index + 1)) {
    newlines++;
  }
  return text.endsWith('\n') ? newlines : newlines + 1;
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return bytes.length >= prefix.length && prefix.every((byte, index) => bytes[index] === byte);
}

function reject(rule: string, message: string, line: number, column: number): DecodedSource {
  return { ok: false, violations: [{ rule, message, line, column }] };
}

/** 1-based line and column of a byte offset, counting columns in bytes (the line may not decode). */
function bytePosition(bytes: Uint8Array, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let index = 0; index < offset; index++) {
    const byte = bytes[index];
    const isLineBreak = byte === 0x0a || (byte === 0x0d && bytes[index + 1] !== 0x0a);
    if (isLineBreak) {
      line++;
      lineStart = index + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** Offset of the first byte that starts an invalid UTF-8 sequence (RFC 3629, no surrogates). */
export function firstInvalidUtf8Offset(bytes: Uint8Array): number {
  let index = 0;
  while (index < bytes.length) {
    const length = validSequenceLength(bytes, index);
    if (length === 0) return index;
    index += length;
  }
  return bytes.length;
}

function validSequenceLength(bytes: Uint8Array, index: number): number {
  const lead = bytes[index];
  if (lead < 0x80) return 1;
  let length: number;
  let min = 0x80;
  let max = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead === 0xe0) min = 0xa0; // overlong
    if (lead === 0xed) max = 0x9f; // surrogates
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead === 0xf0) min = 0x90; // overlong
    if (lead === 0xf4) max = 0x8f; // above U+10FFFF
  } else {
    return 0;
  }
  for (let offset = 1; offset < length; offset++) {
    if (index + offset >= bytes.length) return 0;
    const byte = bytes[index + offset];
    const low = offset === 1 ? min : 0x80;
    const high = offset === 1 ? max : 0xbf;
    if (byte < low || byte > high) return 0;
  }
  return length;
}
