import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** The id of this database (the one row of `installation`, made by its migration). */
@Injectable()
export class Installation {
  private id?: Promise<string>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Read once: the row never changes. A failed read is tried again next time. */
  installationId(): Promise<string> {
    this.id ??= this.read().catch((error: unknown) => {
      this.id = undefined;
      throw error;
    });
    return this.id;
  }

  private async read(): Promise<string> {
    const rows = (await this.dataSource.query('SELECT id FROM installation')) as Array<{ id: string }>;
    if (rows.length !== 1) throw new Error(`the installation table holds ${rows.length} rows, not 1`);
    return rows[0].id;
  }
}
