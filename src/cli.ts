import 'reflect-metadata';
import { CommandFactory } from 'nest-commander';
import { AdminCliModule } from './admin-cli/admin-cli.module';
import { ConfigError } from './config/app-config';
import { configFromEnvironment } from './config/environment';

/** `svc-admin promote|demote|deactivate|activate <EMAIL>`, `svc-admin list`: exit status 0 on success, 1 on any failure. */
async function main(): Promise<void> {
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
      process.stderr.write(`svc-admin: ${error.message}\n`);
      process.exitCode = 1;
    },
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`svc-admin failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
