import { Global, Module } from '@nestjs/common';
import { OutboxStoreModule } from './outbox-store.module';
import { Outbox } from './outbox.service';

/** Global: any feature may write jobs in its own transactions; only the API imports it, so only API processes work them. */
@Global()
@Module({
  imports: [OutboxStoreModule],
  providers: [Outbox],
  exports: [Outbox],
})
export class OutboxModule {}
