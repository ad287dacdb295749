import { readFileSync } from 'node:fs';
import {
  AppConfig,
  ConfigError,
  defaultDatabaseUrl,
  defaultPluginDir,
  loadConfig,
  secretFiles,
} from './app-config';

/** Settings a developer keeps beside the checkout; the process environment wins over it. */
export const ENV_FILE = '.env';

export interface EnvFile {
  values: Record<string, string>;
  /** One entry per line that was not used, with its number and why (never its text: it may hold a secret). */
  ignored: string[];
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const QUOTES = new Set(['"', "'", '`']);

/**
 * `.env` as Node's reader documents it: `NAME=value` lines (an `export ` before the name is
 * allowed), `#` comments, values in '', "" or `` (double quotes expand \n, and may span lines).
 * Our own reader instead of process.loadEnvFile: Node 20's glues a line without `=` to the next
 * line's name, so that setting is lost without a word, and the format differs between Node
 * versions; here every line it cannot use is reported.
 */
export function parseEnvFile(text: string): EnvFile {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const values: Record<string, string> = {};
  const ignored: string[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const number = index + 1;
    const line = lines[index].trim();
    if (line === '' || line.startsWith('#')) continue;
    const equals = line.indexOf('=');
    if (equals === -1) {
      ignored.push(`line ${number} has no "=" (NAME=value expected)`);
      continue;
    }
    const name = line
      .slice(0, equals)
      .trim()
      .replace(/^export\s+/, '');
    if (!NAME.test(name)) {
      ignored.push(
        `line ${number}: the name before "=" is not letters, digits and _ (not starting with a digit)`,
      );
      continue;
    }
    let rest = line.slice(equals + 1).trim();
    const quote = rest[0];
    if (!QUOTES.has(quote)) {
      values[name] = rest.replace(/\s*#.*$/, '');
      continue;
    }
    // A quoted value ends at the same quote, maybe on a later line.
    let end = rest.indexOf(quote, 1);
    let last = index;
    while (end === -1 && last + 1 < lines.length) {
      last += 1;
      rest += `\n${lines[last]}`;
      end = rest.indexOf(quote, 1);
    }
    if (end === -1) {
      ignored.push(
        `line ${number}: the value's ${quote} is never closed (the lines after it were ignored too)`,
      );
      break;
    }
    if (!/^\s*(#.*)?$/.test(rest.slice(end + 1))) {
      ignored.push(`line ${last + 1}: text after the closing ${quote} of ${name}'s value`);
      index = last;
      continue;
    }
    const raw = rest.slice(1, end);
    values[name] = quote === '"' ? raw.replace(/\\n/g, '\n') : raw;
    index = last;
  }
  return { values, ignored };
}

const writeLine = (line: string) => process.stderr.write(`${line}\n`);

/**
 * The one place that reads the process environment (and `.env` in the working directory, if
 * there). Lines of `.env` that were not used are named in one warning line on stderr.
 */
export function configFromEnvironment(warn: (line: string) => void = writeLine): AppConfig {
  const file = readEnvFile(ENV_FILE);
  if (file.ignored.length > 0) warn(`Warning: ${ENV_FILE} ignored: ${file.ignored.join('; ')}`);
  // Into process.env, as Node's reader did: child processes see the same settings.
  for (const [name, value] of Object.entries(file.values)) {
    if (process.env[name] === undefined) process.env[name] = value;
  }
  return loadConfig(process.env, undefined, process.stdout.isTTY === true);
}

/** Where the secrets of the settings configFromEnvironment read live on disk (svc-admin backup). */
export const secretLocations = () => secretFiles(process.env);

/**
 * Where svc-admin acts, for its help: the database and plugin directory as the environment
 * and `.env` choose them, read without writing anything (loadConfig makes keys under data/).
 * A MySQL password is not shown.
 */
export function dataLocations(): {
  database: string;
  databaseFrom: string;
  pluginDir: string;
  pluginDirFrom: string;
} {
  const file = readEnvFile(ENV_FILE).values;
  const setting = (name: string) => (process.env[name] ?? file[name])?.trim() || undefined;
  const url = setting('DATABASE_URL');
  const pluginDir = setting('COMMUNITY_PLUGIN_DIR');
  return {
    database:
      url === undefined
        ? defaultDatabaseUrl()
        : url.replace(/^(mysql|mariadb)(:\/\/[^:@/]*:)[^@]*@/, '$1$2***@'),
    databaseFrom: url === undefined ? 'the default' : 'DATABASE_URL',
    pluginDir: pluginDir ?? defaultPluginDir(),
    pluginDirFrom: pluginDir === undefined ? 'the default' : 'COMMUNITY_PLUGIN_DIR',
  };
}

function readEnvFile(path: string): EnvFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { values: {}, ignored: [] };
    throw new ConfigError([`${path} must be readable (${(error as Error).message})`]);
  }
  return parseEnvFile(text);
}
