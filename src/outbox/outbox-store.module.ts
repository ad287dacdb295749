import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OutboxJob } from './outbox-job.entity';
import { OutboxRepository } from './outbox.repository';

/**
 * The outbox's table without its worker: what a process that only writes jobs imports
 * (svc-admin queues a mail with outboxJob(); an API process works it).
 */
@Module({
  imports: [TypeOrmModule.forFeature([OutboxJob])],
  providers: [OutboxRepository],
  exports: [OutboxRepository],
})
export class OutboxStoreModule {}
