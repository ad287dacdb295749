import { DynamicModule, Module } from '@nestjs/common';
import { CommonModule } from '../common/common.module';
import type { AppConfig } from '../config/app-config';
import { ConfigModule } from '../config/config.module';
import { DatabaseModule } from '../database/database.module';
import { MetricsModule } from '../metrics/metrics.module';
import { SCHEMA_UPGRADE } from '../schema-upgraded-entities';
import { UsersModule } from '../users/users.module';
import { AuditModule } from '../audit/audit.module';
import { PluginFilesModule } from '../community-plugins/plugin-files.module';
import { AuditCommand, AuditVerifyCommand, PluginsCommand, PluginsVerifyCommand } from './integrity.commands';
import { PluginsTestRunCommand } from './test-run.command';
import { ListedAdminGrants } from '../account/listed-admin-grants';
import { BACKUP_PROVIDERS } from './backup/backup-providers';
import { SecondFactorStoreModule } from '../second-factor/second-factor-store.module';
import {
  ActivateCommand,
  DeactivateCommand,
  DemoteCommand,
  ListCommand,
  PromoteCommand,
  ResetSecondFactorCommand,
  SecondFactorCommand,
} from './admin.commands';

/**
 * The `svc-admin` commands on the app's own config, database and users modules, without the
 * HTTP side. The database is migrated on demand: by the commands that write, never by `list`.
 */
@Module({})
export class AdminCliModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AdminCliModule,
      imports: [
        ConfigModule.forRoot(config),
        // The database's measures have somewhere to go; svc-admin serves none.
        MetricsModule.forRoot({ served: false }),
        CommonModule,
        DatabaseModule.forRoot({ upgrade: SCHEMA_UPGRADE, migrate: 'on-demand' }),
        UsersModule,
        AuditModule,
        PluginFilesModule,
        SecondFactorStoreModule,
      ],
      providers: [
        // The API's grants of SVC_ADMIN_EMAILS as the audit log records them (demote, list).
        ListedAdminGrants,
        PromoteCommand,
        DemoteCommand,
        DeactivateCommand,
        ActivateCommand,
        ListCommand,
        SecondFactorCommand,
        ResetSecondFactorCommand,
        PluginsCommand,
        PluginsVerifyCommand,
        PluginsTestRunCommand,
        AuditCommand,
        AuditVerifyCommand,
        ...BACKUP_PROVIDERS,
      ],
    };
  }
}
