import { Command, CommandRunner } from 'nest-commander';
import { dataLocations } from '../../config/environment';
import { COMMANDS } from '../command-specs';
import { AuditLog } from '../../audit/audit-log.service';
import { PluginDigestCheck } from '../../community-plugins/files/plugin-digest-check';
import { BackupRefused, COMPLETE_MARKER } from './backup-directory';
import { BackupFailed, MakeBackup } from './make-backup';
import { RestoreBackup } from './restore-backup';

const out = (line: string) => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);

/** The database as svc-admin names it in every line (a MySQL password masked). */
const database = () => dataLocations().database;

/** The expected refusals are one line on stderr and exit status 1; anything else is svc-admin's own failure line. */
async function refusing(action: () => Promise<void>): Promise<void> {
  try {
    await action();
  } catch (error) {
    if (!(error instanceof BackupFailed || error instanceof BackupRefused)) throw error;
    err(error.message);
    process.exitCode = 1;
  }
}

/** Read-only on the service's data: it migrates nothing and writes only the backup's directory. */
@Command(COMMANDS.backup)
export class BackupCommand extends CommandRunner {
  constructor(private readonly backup: MakeBackup) {
    super();
  }

  run([directory]: string[]): Promise<void> {
    return refusing(async () => {
      const { manifest, notes } = await this.backup.into(directory, database());
      for (const note of notes) err(note);
      out(
        `Backed up ${manifest.database.source} and ${manifest.plugin_files.length} plugin file(s) to ${directory} ` +
          `(${Object.keys(manifest.files).length} files with their sha256 in manifest.json, then ${COMPLETE_MARKER})`,
      );
      err(
        `Warning: ${directory} holds the service's secrets (JWT_SECRET and PLUGIN_MANIFEST_KEY in secrets/): ` +
          'keep it as safe as the service’s own environment',
      );
    });
  }
}

@Command(COMMANDS.restore)
export class RestoreCommand extends CommandRunner {
  constructor(
    private readonly restore: RestoreBackup,
    private readonly audit: AuditLog,
    private readonly digests: PluginDigestCheck,
  ) {
    super();
  }

  run([directory]: string[]): Promise<void> {
    return refusing(async () => {
      const { manifest, notes } = await this.restore.from(directory, database());
      for (const note of notes) err(note);
      out(
        `Restored the backup of ${manifest.created_at} into ${database()} and ` +
          `${manifest.plugin_files.length} plugin file(s) into ${this.restore.pluginDirectory}`,
      );
      // The checks an operator runs next, run once here: a restore that does not pass them says so.
      const chain = await this.audit.verify();
      const files = await this.digests.verify();
      if (chain.intact) out(`Audit log: ${chain.entries} entries, chain intact`);
      else err(`Audit chain broken at ${chain.problem} (${chain.entries} entries before it follow)`);
      if (files.problems.length === 0)
        out(`Plugins: ${files.checked} approved plugin file(s) match their digests`);
      for (const problem of files.problems) err(problem);
      if (!chain.intact || files.problems.length > 0) process.exitCode = 1;
    });
  }
}
