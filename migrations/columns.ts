import { TableColumnOptions, TableForeignKeyOptions } from 'typeorm';

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
