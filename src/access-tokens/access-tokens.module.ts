import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module';
import { AccessTokensController } from './access-tokens.controller';
import { AccessTokensService } from './access-tokens.service';

/** Personal access tokens: their routes; the records and the guard's lookup are in users. */
@Module({
  imports: [UsersModule],
  controllers: [AccessTokensController],
  providers: [AccessTokensService],
})
export class AccessTokensModule {}
