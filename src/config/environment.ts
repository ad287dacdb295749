import { AppConfig, ConfigError, loadConfig } from './app-config';

/** Settings a developer keeps beside the checkout; the process environment wins over it. */
export const ENV_FILE = '.env';

/** The one place that reads the process environment (and `.env` in the working directory, if there). */
export function configFromEnvironment(): AppConfig {
  loadEnvFile();
  return loadConfig(process.env, undefined, process.stdout.isTTY === true);
}

/** Node's own reader: `NAME=value` lines, `#` comments, quotes; variables already set are kept. */
function loadEnvFile(): void {
  try {
    process.loadEnvFile(ENV_FILE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new ConfigError([`${ENV_FILE} must be readable (${(error as Error).message})`]);
  }
}
