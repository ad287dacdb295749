import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { User } from '../account/user.entity';
import { UserLoginToken } from '../auth/user-login-token.entity';
import { CommonModule } from '../common/common.module';
import type { AppConfig } from '../config/app-config';
import { ConfigModule } from '../config/config.module';
import { DatabaseModule } from '../database/database.module';
import {
  ActivateCommand,
  DeactivateCommand,
  DemoteCommand,
  ListCommand,
  PromoteCommand,
} from './admin.commands';
import { AdminUsersService } from './admin-users.service';

/** The `svc-admin` commands on the app's own config and database modules, without the HTTP side. */
@Module({})
export class AdminCliModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AdminCliModule,
      imports: [
        ConfigModule.forRoot(config),
        CommonModule,
        DatabaseModule,
        TypeOrmModule.forFeature([User, UserLoginToken]),
      ],
      providers: [
        AdminUsersService,
        PromoteCommand,
        DemoteCommand,
        DeactivateCommand,
        ActivateCommand,
        ListCommand,
      ],
    };
  }
}
