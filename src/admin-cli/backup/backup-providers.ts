import { DatabaseCopy } from '../../database/copy';
import { BackupCommand, RestoreCommand } from './backup.commands';
import { BackupRepository } from './backup.repository';
import { MakeBackup } from './make-backup';
import { RestoreBackup } from './restore-backup';

/** svc-admin backup and restore, with what they use (AdminCliModule provides them). */
export const BACKUP_PROVIDERS = [
  DatabaseCopy,
  BackupRepository,
  MakeBackup,
  RestoreBackup,
  BackupCommand,
  RestoreCommand,
];
