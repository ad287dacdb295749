import { Command, CommandRunner, SubCommand } from 'nest-commander';
import { COMMANDS } from './command-specs';
import { SchemaMigrator } from '../database/schema-migrator';
import { PASSWORD_RESET_PATH } from '../users/account-paths';
import { ChangeRecorder, ListedAdminError, UnknownEmailError, UsersService } from '../users/users.service';
import { AuditLog } from '../audit/audit-log.service';
import type { AuditAction } from '../audit/audit-entry.entity';
import { PendingApprovals } from '../community-plugins/review/pending-approvals';
import { ListedAdminGrants } from '../account/listed-admin-grants';
import { SecondFactorReset } from '../second-factor/second-factor-reset';

/** Output goes straight to the streams: stdout for results, stderr for warnings and errors. */
const out = (line: string) => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);

/** The audit entry of a change svc-admin makes, written in the change's own transaction. */
function audited(audit: AuditLog, action: AuditAction, email: string): ChangeRecorder {
  return async (manager, user) => {
    await audit.append(manager, {
      actor: 'svc-admin',
      action,
      subject: `user:${user.id}`,
      details: { email: email.trim() },
    });
  };
}

/**
 * A demotion or deactivation, recorded, and with it the approvals the user gave to versions
 * still waiting (an approval counts only from an admin in service); `dropped` counts them.
 */
function leavingRole(
  audit: AuditLog,
  approvals: PendingApprovals,
  action: 'demote' | 'deactivate',
  email: string,
  dropped: { count: number },
): ChangeRecorder {
  const record = audited(audit, action, email);
  return async (manager, user) => {
    await record(manager, user);
    // Set, not added to: a transaction that lost a write conflict runs again.
    dropped.count = await approvals.dropAllOf(manager, user.id, action);
  };
}

const droppedLine = (email: string, count: number) =>
  `Dropped ${count} approval(s) of ${email.trim()} from versions waiting for review`;

/**
 * For the commands that write: the schema is brought up to date first, as the API does at
 * its start. The expected failures (an unknown email, a demotion of an address the setting
 * makes admin) say so in one line and exit with status 1, having written nothing.
 */
async function writingAs(schema: SchemaMigrator, action: () => Promise<void>): Promise<void> {
  await schema.bringUpToDate();
  try {
    await action();
  } catch (error) {
    if (!(error instanceof UnknownEmailError || error instanceof ListedAdminError)) throw error;
    err(error.message);
    process.exitCode = 1;
  }
}

@Command(COMMANDS.promote)
export class PromoteCommand extends CommandRunner {
  constructor(
    private readonly admins: UsersService,
    private readonly schema: SchemaMigrator,
    private readonly audit: AuditLog,
  ) {
    super();
  }

  run([email]: string[]): Promise<void> {
    return writingAs(this.schema, async () => {
      const { change, passwordCleared } = await this.admins.promote(
        email,
        audited(this.audit, 'promote', email),
      );
      if (change === 'unchanged') {
        out(`${email.trim()} is already an admin`);
        return;
      }
      out(`Promoted ${email.trim()} to admin; its tokens were revoked, so it logs in again`);
      if (passwordCleared) {
        err(
          `Note: the password of ${email.trim()} was not set through the OTP mail, so it was cleared: ` +
            `the owner sets one at ${PASSWORD_RESET_PATH} (generate/otp, then new-password) before logging in.`,
        );
      }
    });
  }
}

@Command(COMMANDS.demote)
export class DemoteCommand extends CommandRunner {
  constructor(
    private readonly admins: UsersService,
    private readonly schema: SchemaMigrator,
    private readonly audit: AuditLog,
    private readonly approvals: PendingApprovals,
    private readonly grants: ListedAdminGrants,
  ) {
    super();
  }

  run([email]: string[]): Promise<void> {
    return writingAs(this.schema, async () => {
      const dropped = { count: 0 };
      const change = await this.admins.demote(
        email,
        leavingRole(this.audit, this.approvals, 'demote', email, dropped),
        this.grants,
      );
      out(
        change === 'changed'
          ? `Demoted ${email.trim()}; its tokens were revoked, so it logs in again`
          : `${email.trim()} is not an admin`,
      );
      if (dropped.count > 0) out(droppedLine(email, dropped.count));
    });
  }
}

@Command(COMMANDS.deactivate)
export class DeactivateCommand extends CommandRunner {
  constructor(
    private readonly admins: UsersService,
    private readonly schema: SchemaMigrator,
    private readonly audit: AuditLog,
    private readonly approvals: PendingApprovals,
  ) {
    super();
  }

  run([email]: string[]): Promise<void> {
    return writingAs(this.schema, async () => {
      const dropped = { count: 0 };
      const change = await this.admins.deactivate(
        email,
        leavingRole(this.audit, this.approvals, 'deactivate', email, dropped),
      );
      out(change === 'changed' ? `Deactivated ${email.trim()}` : `${email.trim()} is already deactivated`);
      if (dropped.count > 0) out(droppedLine(email, dropped.count));
    });
  }
}

@Command(COMMANDS.activate)
export class ActivateCommand extends CommandRunner {
  constructor(
    private readonly admins: UsersService,
    private readonly schema: SchemaMigrator,
    private readonly audit: AuditLog,
  ) {
    super();
  }

  run([email]: string[]): Promise<void> {
    return writingAs(this.schema, async () => {
      const { change, emailConfirmed } = await this.admins.activate(
        email,
        audited(this.audit, 'activate', email),
      );
      out(change === 'changed' ? `Activated ${email.trim()}` : `${email.trim()} is not deactivated`);
      if (!emailConfirmed) {
        err(`Note: ${email.trim()} has not confirmed its email yet; login waits for that confirmation.`);
      }
    });
  }
}

@SubCommand(COMMANDS.secondFactorReset)
export class ResetSecondFactorCommand extends CommandRunner {
  constructor(
    private readonly factors: SecondFactorReset,
    private readonly schema: SchemaMigrator,
  ) {
    super();
  }

  run([email]: string[]): Promise<void> {
    return writingAs(this.schema, async () => {
      const change = await this.factors.reset(email);
      out(
        change === 'changed'
          ? `Turned off the second factor of ${email.trim()}; its tokens were revoked, so it logs in with the password alone`
          : `${email.trim()} has no second factor`,
      );
    });
  }
}

@Command({ ...COMMANDS.secondFactor, subCommands: [ResetSecondFactorCommand] })
export class SecondFactorCommand extends CommandRunner {
  run(): Promise<void> {
    err('Usage: svc-admin second-factor reset <email>');
    process.exitCode = 1;
    return Promise.resolve();
  }
}

@Command(COMMANDS.list)
export class ListCommand extends CommandRunner {
  constructor(
    private readonly admins: UsersService,
    private readonly grants: ListedAdminGrants,
  ) {
    super();
  }

  /**
   * Read-only, so it migrates nothing: it reads only columns every schema version since the
   * audit log's has (docs/architecture.md).
   */
  async run(): Promise<void> {
    const admins = await this.admins.listAdminsWithGrants(this.grants);
    for (const admin of admins) {
      out(`${admin.id}\t${admin.email}\t${admin.name}${admin.listed ? '\tSVC_ADMIN_EMAILS' : ''}`);
    }
    if (admins.length === 0) err('No admins');
  }
}
