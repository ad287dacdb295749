/** A read on the same snapshot of the database the backup copied: plain rows, column names as keys. */
export type SnapshotQuery = (sql: string) => Promise<Array<Record<string, unknown>>>;
