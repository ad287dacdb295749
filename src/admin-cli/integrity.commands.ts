import { Inject } from '@nestjs/common';
import { Command, CommandRunner, SubCommand } from 'nest-commander';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { COMMANDS } from './command-specs';
import { AuditLog } from '../audit/audit-log.service';
import { PluginDigestCheck } from '../community-plugins/files/plugin-digest-check';
import { PluginsTestRunCommand } from './test-run.command';
import { databaseLabel } from '../database/database-label';

const out = (line: string) => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);

/** Read-only checks: nothing is migrated or written. Exit 0 when all is well, 1 naming what is not. */
@SubCommand(COMMANDS.pluginsVerify)
export class PluginsVerifyCommand extends CommandRunner {
  constructor(
    private readonly digests: PluginDigestCheck,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  async run(): Promise<void> {
    const { checked, problems } = await this.digests.verify();
    // The directory read: a wrong COMMUNITY_PLUGIN_DIR shows as every file missing.
    const where = `in ${this.config.communityPluginDir}`;
    if (problems.length === 0) {
      out(`${checked} approved plugin file(s) ${where} match their digests`);
      return;
    }
    for (const problem of problems) err(problem);
    err(
      `${problems.length} of ${checked} approved plugin file(s) ${where} are missing or differ from their digests ` +
        `(the approvals of ${databaseLabel(this.config.database)})`,
    );
    process.exitCode = 1;
  }
}

@Command({ ...COMMANDS.plugins, subCommands: [PluginsVerifyCommand, PluginsTestRunCommand] })
export class PluginsCommand extends CommandRunner {
  run(): Promise<void> {
    err('Usage: svc-admin plugins verify | svc-admin plugins test-run <file>');
    process.exitCode = 1;
    return Promise.resolve();
  }
}

@SubCommand(COMMANDS.auditVerify)
export class AuditVerifyCommand extends CommandRunner {
  constructor(
    private readonly audit: AuditLog,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  async run(): Promise<void> {
    const check = await this.audit.verify();
    if (check.intact) {
      out(`${check.entries} entries, chain intact`);
      return;
    }
    err(
      `Audit chain of ${databaseLabel(this.config.database)} broken at ${check.problem} ` +
        `(${check.entries} entries before it follow)`,
    );
    process.exitCode = 1;
  }
}

@Command({ ...COMMANDS.audit, subCommands: [AuditVerifyCommand] })
export class AuditCommand extends CommandRunner {
  run(): Promise<void> {
    err('Usage: svc-admin audit verify');
    process.exitCode = 1;
    return Promise.resolve();
  }
}
