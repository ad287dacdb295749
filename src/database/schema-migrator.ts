import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { migrate } from './migrate';
import { withoutQueryDeadline } from './query-deadline';
import { upgradeSchema } from './schema-upgrade';
import type { SchemaUpgrade } from './schema-upgrade';

export const SCHEMA_UPGRADE = Symbol('schema-upgrade');

/** The migrations, then the in-place upgrade of older tables: what a start that writes runs first. */
@Injectable()
export class SchemaMigrator {
  private done?: Promise<void>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(SCHEMA_UPGRADE) private readonly upgrade: SchemaUpgrade,
  ) {}

  /** Once per process; both steps are no-ops on a schema that is already current. */
  bringUpToDate(): Promise<void> {
    // Exempt from the query deadline: a migration may rightly take longer than any request.
    this.done ??= withoutQueryDeadline(async () => {
      await migrate(this.dataSource);
      await upgradeSchema(this.dataSource, this.upgrade);
    });
    return this.done;
  }
}
