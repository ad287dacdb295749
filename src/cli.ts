import 'reflect-metadata';
import { CommandFactory } from 'nest-commander';
import { AdminCliModule } from './admin-cli/admin-cli.module';
import { answerWithoutRunning } from './admin-cli/command-line';
import { ConfigError } from './config/app-config';
import { configFromEnvironment, dataLocations } from './config/environment';

/** The end of `svc-admin --help`: what it acts on, and how to choose another. */
function whereHelp(): string {
  const where = dataLocations();
  return [
    '',
    `Database: ${where.database} (${where.databaseFrom})`,
    `Plugin files: ${where.pluginDir} (${where.pluginDirFrom})`,
    '',
    'Relative paths are from the working directory. To act on another database, set DATABASE_URL',
    '(sqlite:<path> or mysql://user:pass@host:3306/db) and COMMUNITY_PLUGIN_DIR as the API has them,',
    'in the environment or in .env in the working directory, e.g.',
    '  DATABASE_URL=sqlite:/srv/svc/svc.sqlite npx svc-admin list',
  ].join('\n');
}

/** ` (database <url without password>)`: every failure names the database it met. */
function inDatabase(): string {
  try {
    return ` (database ${dataLocations().database})`;
  } catch {
    // .env unreadable: the failure itself says so.
    return '';
  }
}

/** `svc-admin promote|demote|deactivate|activate <EMAIL>`, `svc-admin list`: exit status 0 on success, 1 on any failure. */
async function main(): Promise<void> {
  // Help and mistakes are answered before the settings (which make keys under data/) and the
  // database (which SQLite creates on opening): they leave nothing behind.
  const answered = answerWithoutRunning(process.argv.slice(2), whereHelp());
  if (answered !== null) {
    process.exitCode = answered;
    return;
  }
  let config;
  try {
    config = configFromEnvironment();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  await CommandFactory.run(AdminCliModule.forRoot(config), {
    cliName: 'svc-admin',
    // Only errors: stdout carries the commands' output and nothing else.
    logger: ['error'],
    // A failed start (no database) reaches main's catch: one line on stderr, exit status 1.
    abortOnError: false,
    serviceErrorHandler: (error: Error) => {
      process.stderr.write(`svc-admin: ${error.message}${inDatabase()}\n`);
      process.exitCode = 1;
    },
  });
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`svc-admin failed: ${message}${inDatabase()}\n`);
  process.exit(1);
});
