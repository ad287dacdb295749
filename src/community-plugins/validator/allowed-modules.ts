import { isForbiddenModule } from './forbidden-modules';

/**
 * The modules a plugin may import: what a security-assessment plugin legitimately uses, and
 * nothing else. A module not listed is refused, a private (`_`) one always, and a listed one
 * still loses the names the other rules forbid (FORBIDDEN_MODULES, dangerous attributes,
 * writing opens). Submodules are listed one by one: `http` is allowed, `http.server` is not.
 */
export const ALLOWED_MODULES: ReadonlySet<string> = new Set([
  // Text, data formats and parsing.
  're',
  'string',
  'textwrap',
  'difflib',
  'unicodedata',
  'json',
  'csv',
  'html',
  'html.parser',
  'html.entities',
  'xml',
  'xml.etree',
  'xml.etree.ElementTree',
  'xml.dom',
  'xml.dom.minidom',
  'xml.sax',
  'xml.sax.saxutils',
  'xml.sax.handler',
  'email',
  'email.utils',
  'email.message',
  'email.parser',
  'email.header',
  'mimetypes',
  'shlex',
  'fnmatch',
  // Encodings, hashing, compression (decoded payloads are checked by their own rule).
  'base64',
  'binascii',
  'codecs',
  'hashlib',
  'hmac',
  'secrets',
  'zlib',
  'gzip',
  'bz2',
  'lzma',
  'struct',
  'uuid',
  // Networks and the web.
  'ipaddress',
  'urllib',
  'urllib.parse',
  'urllib.request',
  'urllib.error',
  'urllib.robotparser',
  'http',
  'http.client',
  'http.cookies',
  'http.cookiejar',
  // Time and numbers.
  'datetime',
  'time',
  'calendar',
  'zoneinfo',
  'math',
  'cmath',
  'decimal',
  'fractions',
  'numbers',
  'random',
  'statistics',
  // Structure of ordinary code.
  'collections',
  'collections.abc',
  'itertools',
  'functools',
  'operator',
  'copy',
  'enum',
  'dataclasses',
  'typing',
  'abc',
  'contextlib',
  'heapq',
  'bisect',
  'array',
  'weakref',
  'types',
  'pprint',
  'reprlib',
  'io',
  'pathlib',
  'glob',
  'logging',
  'warnings',
  'traceback',
  'threading',
  'queue',
  'asyncio',
  // Third-party libraries plugins commonly use.
  'requests',
  'yaml',
  'bs4',
  // The framework's own modules that plugins are written against.
  'owtf',
  'owtf.config',
  'owtf.settings',
  'owtf.plugin',
  'owtf.plugin.helper',
  'owtf.plugin.params',
  'owtf.managers',
  'owtf.managers.resource',
  'owtf.managers.target',
  'owtf.managers.url',
  'owtf.managers.transaction',
  'owtf.requester',
  'owtf.requester.base',
  'owtf.protocols',
  'owtf.protocols.smb',
]);

/**
 * Submodules of the allowed packages, so that `from http import server` is known to import a
 * module (one not allowed) rather than a name. From CPython 3.11's packages.
 */
const PACKAGE_SUBMODULES: ReadonlyMap<string, readonly string[]> = new Map([
  ['xml', ['dom', 'etree', 'parsers', 'sax']],
  ['xml.etree', ['ElementInclude', 'ElementPath', 'ElementTree', 'cElementTree']],
  ['xml.dom', ['NodeFilter', 'domreg', 'expatbuilder', 'minicompat', 'minidom', 'pulldom', 'xmlbuilder']],
  ['xml.sax', ['expatreader', 'handler', 'saxutils', 'xmlreader']],
  ['urllib', ['error', 'parse', 'request', 'response', 'robotparser']],
  ['http', ['client', 'cookiejar', 'cookies', 'server']],
  ['collections', ['abc']],
  ['logging', ['config', 'handlers']],
  ['json', ['decoder', 'encoder', 'scanner', 'tool']],
  ['html', ['entities', 'parser']],
  ['concurrent', ['futures']],
  [
    'email',
    [
      'base64mime',
      'charset',
      'contentmanager',
      'encoders',
      'errors',
      'feedparser',
      'generator',
      'header',
      'headerregistry',
      'iterators',
      'message',
      'mime',
      'parser',
      'policy',
      'quoprimime',
      'utils',
    ],
  ],
]);

/** Why a module may not be imported, or null when it may. */
export function moduleRefusal(dottedName: string): string | null {
  if (isForbiddenModule(dottedName)) return `Import of forbidden module '${dottedName}'`;
  if (dottedName.split('.').some((segment) => segment.startsWith('_'))) {
    return `Import of private module '${dottedName}' is not allowed`;
  }
  if (!ALLOWED_MODULES.has(dottedName)) return `Import of module '${dottedName}' is not allowed`;
  return null;
}

/** True when `from package import name` imports a submodule rather than a name. */
export function isSubmodule(packageName: string, name: string): boolean {
  return (PACKAGE_SUBMODULES.get(packageName) ?? []).includes(name);
}
