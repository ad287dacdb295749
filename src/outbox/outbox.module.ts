import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OutboxJob } from './outbox-job.entity';
import { OutboxRepository } from './outbox.repository';
import { Outbox } from './outbox.service';

/** Global: any feature may write jobs in its own transactions; only the API imports it, so only API processes work them. */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([OutboxJob])],
  providers: [Outbox, OutboxRepository],
  exports: [Outbox],
})
export class OutboxModule {}
