/** Stable rule ids: clients match on these, so never rename one. */
export const Rule = {
  syntaxError: 'syntax-error',
  encoding: 'encoding',
  forbiddenImport: 'forbidden-import',
  relativeImport: 'relative-import',
  starImport: 'star-import',
  forbiddenName: 'forbidden-name',
  dunderAccess: 'dunder-access',
  privateAccess: 'private-access',
  moduleTampering: 'module-tampering',
  formatString: 'format-string',
  moduleAttribute: 'module-attribute',
  openWrite: 'open-write',
  dangerousAttribute: 'dangerous-attribute',
  unsafeYamlLoad: 'unsafe-yaml-load',
  decodedCall: 'decoded-call',
  missingDescription: 'missing-description',
  missingRun: 'missing-run',
  tooLarge: 'too-large',
  tooDeep: 'too-deep',
  internalError: 'internal-error',
} as const;

export type RuleId = (typeof Rule)[keyof typeof Rule];

/** 20,000 lines of 50 bytes; far above any real plugin, and it bounds the work per upload. */
export const MAX_SOURCE_BYTES = 1024 * 1024;
export const MAX_SOURCE_LINES = 20_000;
export const MAX_NESTING_DEPTH = 100;
/** Keeps the answer to a hostile upload small; the plugin is rejected either way. */
export const MAX_REPORTED_VIOLATIONS = 1_000;
/**
 * Time for parsing and all rules together. A 200 KB plugin needs about 50 ms; crafted 1 MB
 * inputs reach seconds, and are rejected here instead.
 */
export const ANALYSIS_BUDGET_MS = 3_000;

/** Builtins that evaluate code, reach interpreter state or read stdin. */
export const FORBIDDEN_BUILTIN_NAMES: ReadonlySet<string> = new Set([
  'eval',
  'exec',
  'compile',
  '__import__',
  'execfile',
  'breakpoint',
  'input',
  'globals',
  'locals',
  'vars',
  'getattr',
  'setattr',
  'delattr',
  // help() starts pydoc, whose pager runs a shell command.
  'help',
]);

/**
 * Forbidden builtin names that are also ordinary method names (`re.compile`, `parser.input`):
 * as attributes they are only rejected on the builtins module itself.
 */
export const BUILTIN_NAMES_ALLOWED_AS_ATTRIBUTES: ReadonlySet<string> = new Set(['compile', 'input', 'help']);

/**
 * Dunder names a plugin may use as plain names: `if __name__ == '__main__':`, and its own
 * metadata (`__version__ = '1.0'`, `__all__`, a class's `__slots__`).
 */
export const ALLOWED_PLAIN_DUNDER_NAMES: ReadonlySet<string> = new Set([
  '__name__',
  '__doc__',
  '__version__',
  '__author__',
  '__license__',
  '__all__',
  '__slots__',
]);

/** Dunder attributes any object may be read for: what it is called and documented as. */
export const READABLE_DUNDER_ATTRIBUTES: ReadonlySet<string> = new Set(['__name__', '__doc__']);

/** Ordinary special methods: definable in a class body, callable on `self` or `super()`. */
export const ALLOWED_DUNDER_METHODS: ReadonlySet<string> = new Set([
  '__init__',
  '__str__',
  '__repr__',
  '__eq__',
  '__hash__',
  '__len__',
  '__iter__',
  '__next__',
  '__enter__',
  '__exit__',
]);

/**
 * Attribute names rejected on any object: they spawn processes, build functions from code
 * objects, or walk frames to reach globals without a single dunder.
 */
export const DANGEROUS_ATTRIBUTE_NAMES: ReadonlySet<string> = new Set([
  'subprocess_exec',
  'subprocess_shell',
  'attrgetter',
  'methodcaller',
  'FunctionType',
  'CodeType',
  'LambdaType',
  'gi_frame',
  'gi_code',
  'cr_frame',
  'cr_code',
  'ag_frame',
  'ag_code',
  'f_globals',
  'f_locals',
  'f_builtins',
  'f_back',
  'f_code',
  'tb_frame',
  'co_code',
  'func_globals',
  'func_code',
  // Process creation, under whatever module object it was reached through. (`fork` is not
  // here: os.fork and pty.fork need a forbidden module, and `repo.fork` is a plain flag.)
  'popen',
  'Popen',
  'forkpty',
  'posix_spawn',
  'posix_spawnp',
  'spawnl',
  'spawnle',
  'spawnlp',
  'spawnlpe',
  'spawnv',
  'spawnve',
  'spawnvp',
  'spawnvpe',
  'execl',
  'execle',
  'execlp',
  'execlpe',
  'execv',
  'execve',
  'execvp',
  'execvpe',
  'startfile',
  'check_output',
  'check_call',
  'getoutput',
  'getstatusoutput',
  // sqlite3 loads native code; string.Formatter().get_field walks attributes like getattr.
  'load_extension',
  'enable_load_extension',
  'get_field',
  // string.Formatter().vformat(template, ...): a template built at run time.
  'vformat',
]);

/** Builtins allowed when the attribute they name is a plain literal that passes the attribute rules. */
export const LITERAL_ATTRIBUTE_BUILTINS: ReadonlySet<string> = new Set(['getattr', 'setattr', 'delattr']);

export const DANGEROUS_ATTRIBUTE_PREFIXES: readonly string[] = ['create_subprocess'];

/** Fully qualified names rejected wherever they are referenced or imported from. */
export const DANGEROUS_QUALIFIED_NAMES: ReadonlySet<string> = new Set([
  'sys.modules',
  'operator.methodcaller',
  // Evaluate string annotations as code.
  'typing.get_type_hints',
  'typing.ForwardRef',
  'types.FunctionType',
  'types.CodeType',
  'types.LambdaType',
]);

export const YAML_LOADERS_NEEDING_SAFE_LOADER: ReadonlySet<string> = new Set(['load', 'load_all']);
export const YAML_ALWAYS_UNSAFE_LOADERS: ReadonlySet<string> = new Set([
  'unsafe_load',
  'unsafe_load_all',
  'full_load',
  'full_load_all',
]);
export const YAML_SAFE_LOADER_CLASSES: ReadonlySet<string> = new Set(['SafeLoader', 'CSafeLoader']);

/**
 * Methods that write or move files without going through open(), on whatever object
 * (`Path.write_text`, `Path.rename` of a file to `x.pth`): a written file can become code.
 */
export const FILE_WRITING_METHODS: ReadonlySet<string> = new Set([
  'write_text',
  'write_bytes',
  'touch',
  'rename',
  'symlink_to',
  'hardlink_to',
  'link_to',
]);

/** Names that open files for writing however they are called. */
export const FILE_WRITING_QUALIFIED_NAMES: ReadonlySet<string> = new Set([
  'io.FileIO',
  'logging.FileHandler',
  'urllib.request.urlretrieve',
  'http.cookiejar.FileCookieJar',
  'http.cookiejar.MozillaCookieJar',
  'http.cookiejar.LWPCookieJar',
]);

/** The shape of an open() mode string, to tell `gzip.open(p, 'wb')` from `opener.open(url)`. */
export const OPEN_MODE_SHAPE = /^[rwxabtU+]{1,4}$/;

/** Qualified names that behave like builtin open(file, mode). */
export const OPEN_LIKE_QUALIFIED_NAMES: ReadonlySet<string> = new Set([
  'open',
  'io.open',
  '_io.open',
  'codecs.open',
  'gzip.open',
  'gzip.GzipFile',
  'bz2.open',
  'bz2.BZ2File',
  'lzma.open',
  'lzma.LZMAFile',
]);

/**
 * Modules whose rules are checked on `module.attribute` spellings. Used as a plain value
 * (`y = yaml`, `[io][0].open`) they would slip past those rules, so that is rejected too,
 * under the rule the module matters for.
 */
export const MODULES_USABLE_ONLY_BY_ATTRIBUTE: ReadonlyMap<string, RuleId> = new Map<string, RuleId>([
  ['yaml', Rule.unsafeYamlLoad],
  ['io', Rule.openWrite],
  ['_io', Rule.openWrite],
  ['codecs', Rule.openWrite],
  ['base64', Rule.decodedCall],
  ['binascii', Rule.decodedCall],
  ['zlib', Rule.decodedCall],
  ['bz2', Rule.decodedCall],
  ['lzma', Rule.decodedCall],
  ['gzip', Rule.decodedCall],
  ['quopri', Rule.decodedCall],
  ['operator', Rule.dangerousAttribute],
  ['types', Rule.dangerousAttribute],
  ['asyncio', Rule.dangerousAttribute],
]);

export const READ_ONLY_OPEN_MODES: ReadonlySet<string> = new Set(['r', 'rb', 'rt']);

/** True for functions that turn an opaque literal into bytes or text: a way to hide payloads. */
export function isDecoderFunction(qualifiedName: string): boolean {
  const dot = qualifiedName.lastIndexOf('.');
  if (dot < 0) return false;
  const owner = qualifiedName.slice(0, dot);
  const name = qualifiedName.slice(dot + 1);
  switch (owner) {
    case 'base64':
    case 'codecs':
      return name.includes('decode');
    case 'binascii':
      return name.startsWith('a2b_') || name === 'unhexlify';
    case 'bytes':
    case 'bytearray':
      return name === 'fromhex';
    case 'zlib':
    case 'bz2':
    case 'lzma':
    case 'gzip':
      return name === 'decompress';
    case 'quopri':
      return name === 'decodestring' || name === 'decode';
    default:
      return false;
  }
}

/**
 * Underscore names that are public API: namedtuple's methods and fields. Every other `_name`
 * is private to its owner, and a plugin only owns `self` and `cls`.
 */
export const PUBLIC_UNDERSCORE_ATTRIBUTES: ReadonlySet<string> = new Set([
  '_asdict',
  '_replace',
  '_fields',
  '_make',
  '_field_defaults',
]);

/** `_name`, not a dunder and not the throwaway `_`. */
export function isPrivateName(name: string): boolean {
  return name.length > 1 && name.startsWith('_') && !isDunder(name);
}

export function isDunder(name: string): boolean {
  return name.length >= 4 && name.startsWith('__') && name.endsWith('__');
}
