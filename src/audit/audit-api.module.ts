import { Module } from '@nestjs/common';
import { AuditController } from './audit.controller';

/** GET /api/v1/audit/ (admins); the API loads it, svc-admin does not. */
@Module({ controllers: [AuditController] })
export class AuditApiModule {}
