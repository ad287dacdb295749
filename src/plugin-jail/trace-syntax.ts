/**
 * strace's output as the tracer writes it to its stderr with `-f -y -x`: one line per event,
 * `[pid N] ` before it while more than one process is traced (none while the first process is
 * alone: FIRST_PROCESS). What the plugin controls (paths, strings) comes escaped, so the grammar
 * below is unambiguous: a string is quoted with `\"` inside, a descriptor's path is `N<path>`
 * with `>` escaped, and nothing the plugin writes can start a line.
 */

export type TraceLine =
  | { kind: 'call'; pid: number; name: string; args: string[]; result: CallResult }
  | { kind: 'unfinished'; pid: number; name: string; text: string }
  | { kind: 'resumed'; pid: number; name: string; text: string }
  | { kind: 'signal'; pid: number; signal: string; info: string }
  /** A process in a group stop (SIGSTOP and its kin): its cause is the signal's own line. */
  | { kind: 'stopped'; pid: number; signal: string }
  | { kind: 'exit'; pid: number; code: number | null; signal: string | null }
  | { kind: 'tracer'; text: string };

export interface CallResult {
  /** The number returned, null for `?` (the process went away inside the call). */
  value: number | null;
  /** The path of a descriptor returned (`= 3</work/a.py>`): the kernel's resolution of what was opened. */
  path: string | null;
  /** The error's name (`ENOENT`) when the call failed. */
  error: string | null;
}

/** The pid given to a line without `[pid N]`: the first process's while it was the only one. */
export const FIRST_PROCESS = 0;
const LINE = /^(?:\[pid +(\d+)\] )?(.*)$/;
const EXITED = /^\+\+\+ exited with (\d+) \+\+\+$/;
const KILLED = /^\+\+\+ killed by (SIG[A-Z0-9]+)(?: \(core dumped\))? \+\+\+$/;
const SIGNAL = /^--- (SIG[A-Z0-9]+) (.*) ---$/;
const STOPPED = /^--- stopped by (SIG[A-Z0-9]+) ---$/;
const RESUMED = /^<\.\.\. ([a-z_0-9]+) resumed>(.*)$/;
const NAME = /^([a-z_0-9]+)\(/;
const UNFINISHED = ' <unfinished ...>';
const RESULT = /^ += (-?\d+|0x[0-9a-f]+|\?)(.*)$/;
const ERROR = /^ (E[A-Z0-9]+) \(/;

/** One line of the trace, or null when it follows none of strace's forms (a confused tracer). */
export function parseTraceLine(line: string): TraceLine | null {
  if (line.startsWith('strace: ')) return { kind: 'tracer', text: line };
  const match = LINE.exec(line)!;
  const pid = match[1] === undefined ? FIRST_PROCESS : Number(match[1]);
  const rest = match[2];
  let found: RegExpExecArray | null;
  // The first character tells the forms apart: `+++` an end, `---` a signal, `<...` a resumed call.
  const first = rest[0];
  if (first === '+' && (found = EXITED.exec(rest)))
    return { kind: 'exit', pid, code: Number(found[1]), signal: null };
  if (first === '+' && (found = KILLED.exec(rest)))
    return { kind: 'exit', pid, code: null, signal: found[1] };
  if (first === '-' && (found = SIGNAL.exec(rest)))
    return { kind: 'signal', pid, signal: found[1], info: found[2] };
  if (first === '-' && (found = STOPPED.exec(rest))) return { kind: 'stopped', pid, signal: found[1] };
  if (first === '<' && (found = RESUMED.exec(rest)))
    return { kind: 'resumed', pid, name: found[1], text: found[2] };
  if (rest.endsWith(UNFINISHED) && NAME.test(rest)) {
    const name = NAME.exec(rest)![1];
    return { kind: 'unfinished', pid, name, text: rest.slice(name.length + 1, -UNFINISHED.length) };
  }
  const call = parseCall(rest);
  return call === null ? null : { kind: 'call', pid, ...call };
}

/** `name(arg, arg, ...) = result`: the arguments split at their top-level commas. */
export function parseCall(text: string): { name: string; args: string[]; result: CallResult } | null {
  const name = NAME.exec(text)?.[1];
  if (name === undefined) return null;
  const args: string[] = [];
  let depth = 0;
  let start = name.length + 1;
  let index = start;
  for (; index < text.length; index += 1) {
    const char = text.charCodeAt(index);
    if (char === QUOTE) {
      index = closing(text, index + 1, '"');
    } else if (char === LESS && index > 0 && afterDescriptor(text.charCodeAt(index - 1))) {
      index = closing(text, index + 1, '>'); // a descriptor's path: `3</work>`, `AT_FDCWD</work>`
    } else if (char === OPEN_PAREN || char === OPEN_BRACKET || char === OPEN_BRACE) {
      depth += 1;
    } else if (char === CLOSE_BRACKET || char === CLOSE_BRACE) {
      depth -= 1;
    } else if (char === CLOSE_PAREN) {
      if (depth === 0) break;
      depth -= 1;
    } else if (char === COMMA && depth === 0) {
      args.push(text.slice(start, index).trim());
      start = index + 1;
    }
    if (index < 0) return null;
  }
  if (index >= text.length) return null;
  const last = text.slice(start, index).trim();
  if (last !== '' || args.length > 0) args.push(last);
  const result = parseResult(text.slice(index + 1));
  return result === null ? null : { name, args, result };
}

function parseResult(text: string): CallResult | null {
  const match = RESULT.exec(text);
  if (!match) return null;
  const value = match[1] === '?' ? null : Number(match[1]);
  let rest = match[2];
  let path: string | null = null;
  if (rest.startsWith('<')) {
    const end = closing(rest, 1, '>');
    if (end < 0) return null;
    path = decodeEscaped(rest.slice(1, end));
    rest = rest.slice(end + 1);
  }
  return { value, path, error: ERROR.exec(rest)?.[1] ?? null };
}

const [QUOTE, LESS, COMMA] = ['"', '<', ','].map((char) => char.charCodeAt(0));
const [OPEN_PAREN, CLOSE_PAREN, OPEN_BRACKET, CLOSE_BRACKET, OPEN_BRACE, CLOSE_BRACE] = [...'()[]{}'].map(
  (char) => char.charCodeAt(0),
);
/** `<` opens a descriptor's path after its number or after `AT_FDCWD`. */
const afterDescriptor = (code: number) => (code >= 48 && code <= 57) || code === 68; // 0-9, D

/** The index of the unescaped `end` from `from` on, or -1. */
function closing(text: string, from: number, end: string): number {
  for (let index = text.indexOf(end, from); index >= 0; index = text.indexOf(end, index + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(index - 1 - backslashes) === 92) backslashes += 1;
    if (backslashes % 2 === 0) return index;
  }
  return -1;
}

const SIMPLE_ESCAPES: Record<string, number> = { n: 10, t: 9, r: 13, v: 11, f: 12, '\\': 92, '"': 34 };

/** strace's C-style escapes (`\x2f`, `\76`, `\n`, `\"`) back to the bytes, read as UTF-8. */
export function decodeEscaped(text: string): string {
  if (!text.includes('\\')) return text;
  const bytes: number[] = [];
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (char !== '\\') {
      bytes.push(...Buffer.from(char, 'utf8'));
      continue;
    }
    const next = text[index + 1] ?? '';
    const hex = /^x([0-9a-fA-F]{2})/.exec(text.slice(index + 1));
    const octal = /^[0-7]{1,3}/.exec(text.slice(index + 1));
    if (hex) {
      bytes.push(parseInt(hex[1], 16));
      index += 3;
    } else if (octal) {
      bytes.push(parseInt(octal[0], 8) & 0xff);
      index += octal[0].length;
    } else if (next in SIMPLE_ESCAPES) {
      bytes.push(SIMPLE_ESCAPES[next]);
      index += 1;
    } else {
      bytes.push(92);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** A string argument (`"/work/a.py"`, maybe followed by `...` when cut), decoded; null if it is not one. */
export function stringArgument(arg: string | undefined): string | null {
  if (arg === undefined || !arg.startsWith('"')) return null;
  const end = closing(arg, 1, '"');
  return end < 0 ? null : decodeEscaped(arg.slice(1, end));
}

/** A descriptor argument's path (`3</work>`, `AT_FDCWD</work>`), or null when strace showed none. */
export function descriptorPath(arg: string | undefined): string | null {
  if (arg === undefined) return null;
  const open = arg.indexOf('<');
  if (open < 0 || !arg.endsWith('>')) return null;
  return decodeEscaped(arg.slice(open + 1, -1));
}
