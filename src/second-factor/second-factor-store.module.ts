import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OutboxStoreModule } from '../outbox/outbox-store.module';
import { UsersModule } from '../users/users.module';
import { SecondFactorReset } from './second-factor-reset';
import { SecondFactorRepository } from './second-factor.repository';
import { RecoveryCode, UserTotp } from './totp.entity';

/**
 * The second factor's tables and svc-admin's reset: shared by the API and svc-admin (no HTTP, no
 * limits). The reset queues the owner's mail in the outbox's table.
 */
@Module({
  imports: [TypeOrmModule.forFeature([UserTotp, RecoveryCode]), UsersModule, OutboxStoreModule],
  providers: [SecondFactorRepository, SecondFactorReset],
  exports: [SecondFactorRepository, SecondFactorReset],
})
export class SecondFactorStoreModule {}
