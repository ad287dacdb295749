import { QueryRunner, TableColumnOptions, TableForeignKeyOptions } from 'typeorm';

/** Column shapes shared by the migrations, written once so SQLite and MySQL agree. */
export const id = (): TableColumnOptions => ({
  name: 'id',
  type: 'integer',
  isPrimary: true,
  isGenerated: true,
  generationStrategy: 'increment',
});

/** Millisecond precision on MySQL; SQLite keeps milliseconds in its text form anyway. */
export const timestamp = (name: string, isNullable = false): TableColumnOptions => ({
  name,
  type: 'datetime',
  precision: 3,
  isNullable,
});

export const foreignKeyToUser = (column: string): TableForeignKeyOptions => ({
  columnNames: [column],
  referencedTableName: 'users',
  referencedColumnNames: ['id'],
  onDelete: 'CASCADE',
});

/**
 * MySQL: drops every unique index (but the primary key) on any of `columns` of `table`, which
 * compare under the column's accent- and case-folding collation where a key column now decides.
 */
export async function dropMysqlUniqueIndexesOn(
  queryRunner: QueryRunner,
  table: string,
  columns: readonly string[],
): Promise<void> {
  const indexes = (await queryRunner.query(`SHOW INDEX FROM ${table}`)) as Array<{
    Key_name: string;
    Column_name: string;
    Non_unique: number | string;
  }>;
  const names = new Set(
    indexes
      .filter(
        (index) =>
          Number(index.Non_unique) === 0 &&
          index.Key_name !== 'PRIMARY' &&
          columns.includes(index.Column_name),
      )
      .map((index) => index.Key_name),
  );
  for (const name of names) await queryRunner.query(`ALTER TABLE ${table} DROP INDEX \`${name}\``);
}
