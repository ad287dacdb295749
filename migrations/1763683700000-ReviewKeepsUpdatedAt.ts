import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reviews used to move updated_at to the review time, which told every user when an admin
 * acted. Nothing else ever changed a plugin after its upload, so a row whose updated_at is
 * its review time gets its upload time back.
 */
export class ReviewKeepsUpdatedAt1763683700000 implements MigrationInterface {
  name = 'ReviewKeepsUpdatedAt1763683700000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // A plugin table older than these columns gets them from the start-up upgrade, without reviews.
    const table = await queryRunner.getTable('user_plugins');
    if (!table?.findColumnByName('reviewed_at') || !table.findColumnByName('updated_at')) return;
    await queryRunner.query(
      'UPDATE user_plugins SET updated_at = created_at WHERE reviewed_at IS NOT NULL AND updated_at = reviewed_at',
    );
  }

  async down(): Promise<void> {
    // The review times are still in reviewed_at; nothing to undo.
  }
}
