import { AppConfig, loadConfig } from './app-config';

/** The one place that reads the process environment. */
export function configFromEnvironment(): AppConfig {
  return loadConfig(process.env);
}
