import { DynamicModule, Module } from '@nestjs/common';
import { AccessTokensModule } from './access-tokens/access-tokens.module';
import { AccountLoginsModule } from './account-logins/account-logins.module';
import { AuditModule } from './audit/audit.module';
import { AuditApiModule } from './audit/audit-api.module';
import { APP_FILTER } from '@nestjs/core';
import { AccountModule } from './account/account.module';
import { AuthModule } from './auth/auth.module';
import { AllExceptionsFilter } from './common/all-exceptions.filter';
import { CommonModule } from './common/common.module';
import { CommunityPluginsModule } from './community-plugins/community-plugins.module';
import { PluginTestRunsModule } from './plugin-test-runs/plugin-test-runs.module';
import { ConfigurationModule } from './configuration/configuration.module';
import type { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { HealthModule } from './health/health.module';
import { HttpEdgeModule } from './http/http-edge.module';
import { LoggingModule } from './logging/logging.module';
import { MailModule } from './mail/mail.module';
import { MetricsModule } from './metrics/metrics.module';
import { OutboxModule } from './outbox/outbox.module';
import { RateLimitModule } from './rate-limit/rate-limit.module';
import { SCHEMA_UPGRADE } from './schema-upgraded-entities';
import { SecondFactorModule } from './second-factor/second-factor.module';
import { SessionsModule } from './sessions/sessions.module';
import { TargetsModule } from './targets/targets.module';
import { UsersModule } from './users/users.module';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule,
        MetricsModule.forRoot({ served: true }),
        CommonModule,
        DatabaseModule.forRoot({ upgrade: SCHEMA_UPGRADE, migrate: 'at-start' }),
        OutboxModule,
        AuditModule,
        AuditApiModule,
        MailModule,
        RateLimitModule,
        UsersModule,
        AccountModule,
        AuthModule,
        AccessTokensModule,
        AccountLoginsModule,
        SecondFactorModule,
        // After AuthModule: its guard reads forms only for authenticated callers.
        HttpEdgeModule,
        ConfigurationModule,
        TargetsModule,
        SessionsModule,
        CommunityPluginsModule,
        PluginTestRunsModule,
        HealthModule,
      ],
      providers: [{ provide: APP_FILTER, useClass: AllExceptionsFilter }],
    };
  }
}
