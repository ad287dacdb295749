import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OutboxJob } from '../outbox/outbox-job.entity';
import { UsersModule } from '../users/users.module';
import { SecondFactorReset } from './second-factor-reset';
import { SecondFactorRepository } from './second-factor.repository';
import { RecoveryCode, UserTotp } from './totp.entity';

/**
 * The second factor's tables and svc-admin's reset: shared by the API and svc-admin (no HTTP, no
 * limits). The outbox's table too: the reset queues the owner's mail there.
 */
@Module({
  imports: [TypeOrmModule.forFeature([UserTotp, RecoveryCode, OutboxJob]), UsersModule],
  providers: [SecondFactorRepository, SecondFactorReset],
  exports: [SecondFactorRepository, SecondFactorReset],
})
export class SecondFactorStoreModule {}
