import { Command, CommandRunner, SubCommand } from 'nest-commander';
import { AuditLog } from '../audit/audit-log.service';
import { PluginDigestCheck } from '../community-plugins/plugin-digest-check';

const out = (line: string) => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);

/** Read-only checks: nothing is migrated or written. Exit 0 when all is well, 1 naming what is not. */
@SubCommand({
  name: 'verify',
  description: 'Hash every approved plugin file and compare it with its approved digest',
})
export class PluginsVerifyCommand extends CommandRunner {
  constructor(private readonly digests: PluginDigestCheck) {
    super();
  }

  async run(): Promise<void> {
    const { checked, problems } = await this.digests.verify();
    if (problems.length === 0) {
      out(`${checked} approved plugin file(s) match their digests`);
      return;
    }
    for (const problem of problems) err(problem);
    err(`${problems.length} of ${checked} approved plugin file(s) are missing or differ from their digests`);
    process.exitCode = 1;
  }
}

@Command({ name: 'plugins', description: 'Plugin files: verify', subCommands: [PluginsVerifyCommand] })
export class PluginsCommand extends CommandRunner {
  run(): Promise<void> {
    err('Usage: svc-admin plugins verify');
    process.exitCode = 1;
    return Promise.resolve();
  }
}

@SubCommand({ name: 'verify', description: 'Check that every audit entry follows the hash chain' })
export class AuditVerifyCommand extends CommandRunner {
  constructor(private readonly audit: AuditLog) {
    super();
  }

  async run(): Promise<void> {
    const check = await this.audit.verify();
    if (check.intact) {
      out(`${check.entries} entries, chain intact`);
      return;
    }
    err(`Audit chain broken at ${check.problem} (${check.entries} entries before it follow)`);
    process.exitCode = 1;
  }
}

@Command({ name: 'audit', description: 'The audit log: verify', subCommands: [AuditVerifyCommand] })
export class AuditCommand extends CommandRunner {
  run(): Promise<void> {
    err('Usage: svc-admin audit verify');
    process.exitCode = 1;
    return Promise.resolve();
  }
}
