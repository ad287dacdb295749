import { Inject } from '@nestjs/common';
import { readFile } from 'node:fs/promises';
import { CommandRunner, SubCommand } from 'nest-commander';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { checkJail, runPlugin } from '../plugin-jail';
import { jailSettings } from '../plugin-test-runs/jail-settings';
import { COMMANDS } from './command-specs';

const err = (line: string) => process.stderr.write(`${line}\n`);

/**
 * Any local file through the API's jail, for an admin reviewing offline: the report as JSON on
 * stdout, exit 0 when a report was made (whatever the plugin did); 1 when the file cannot be
 * read or the jail cannot run here (one line saying what is missing).
 */
@SubCommand(COMMANDS.pluginsTestRun)
export class PluginsTestRunCommand extends CommandRunner {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    super();
  }

  async run([file]: string[]): Promise<void> {
    let source: Buffer;
    try {
      source = await readFile(file);
    } catch (error) {
      err(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
      process.exitCode = 1;
      return;
    }
    const settings = jailSettings(this.config.pluginTestRun);
    const problem = await checkJail(settings);
    if (problem !== null) {
      err(`Test-runs are unavailable: ${problem}`);
      process.exitCode = 1;
      return;
    }
    const report = await runPlugin(source, settings);
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  }
}
