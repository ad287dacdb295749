import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditEntry } from './audit-entry.entity';
import { AuditLog } from './audit-log.service';
import { AuditRepository } from './audit.repository';

/** The audit log, global: the API's features and svc-admin append to it. The controller is AuditApiModule's. */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([AuditEntry])],
  providers: [AuditLog, AuditRepository],
  exports: [AuditLog],
})
export class AuditModule {}
