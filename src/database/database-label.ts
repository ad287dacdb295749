import type { DatabaseConfig } from '../config/app-config';

/**
 * The database a command acted on, as its errors name it (an unknown email is often a command
 * run on the default database instead of the API's): its URL without the password.
 */
export function databaseLabel(database: DatabaseConfig): string {
  return database.type === 'sqlite'
    ? `sqlite:${database.path}`
    : `mysql://${database.username}@${database.host}:${database.port}/${database.database}`;
}
