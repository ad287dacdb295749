import type { QueryRunner } from 'typeorm';
import { mailboxOf } from './mailbox';

/** Users given their mailbox per statement batch. */
const MAILBOX_BATCH = 1000;

/**
 * Gives every user without one the mailbox of its address: at every start that migrates,
 * after the migration that adds the column. Rows a replica of an older version registers
 * while this one runs are completed at the next start; until then the rules that compare
 * mailboxes treat such a user as only itself (see UsersRepository.sameMailbox).
 */
export async function completeUserMailboxes(queryRunner: QueryRunner): Promise<void> {
  const table = await queryRunner.getTable('users');
  if (!table?.findColumnByName('mailbox')) return;
  for (;;) {
    const rows = (await queryRunner.query(
      `SELECT id, email FROM users WHERE mailbox IS NULL ORDER BY id LIMIT ${MAILBOX_BATCH}`,
    )) as Array<{ id: number | string; email: string }>;
    if (rows.length === 0) return;
    await queryRunner.startTransaction();
    try {
      for (const row of rows) {
        await queryRunner.query('UPDATE users SET mailbox = ? WHERE id = ?', [
          mailboxOf(row.email),
          Number(row.id),
        ]);
      }
      await queryRunner.commitTransaction();
    } catch (error) {
      await queryRunner.rollbackTransaction();
      throw error;
    }
    if (rows.length < MAILBOX_BATCH) return;
  }
}
