/** Runs one statement: an EntityManager's or a QueryRunner's `query`. */
export type RunQuery = (sql: string, params?: unknown[]) => Promise<unknown>;
