import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, In, Repository } from 'typeorm';
import { AuditAction, AuditEntry } from './audit-entry.entity';

export interface ChainHead {
  entries: number;
  lastHash: string;
}

/** Every query on audit_log and its head, audit_chain: inserts and reads only. */
@Injectable()
export class AuditRepository {
  constructor(@InjectRepository(AuditEntry) private readonly entries: Repository<AuditEntry>) {}

  private get isMysql(): boolean {
    return this.entries.manager.connection.options.type === 'mysql';
  }

  /** A write lock on the head, held until the caller's transaction ends. */
  async lockChain(manager: EntityManager): Promise<void> {
    await manager.query('UPDATE audit_chain SET id = id WHERE id = 1');
  }

  /** The head as of now (a locking read on MySQL, whatever snapshot the transaction has). */
  async head(manager: EntityManager = this.entries.manager, locking = false): Promise<ChainHead | null> {
    const [row] = (await manager.query(
      `SELECT entries, last_hash FROM audit_chain WHERE id = 1${locking && this.isMysql ? ' FOR UPDATE' : ''}`,
    )) as Array<{ entries: number | string; last_hash: string }>;
    return row ? { entries: Number(row.entries), lastHash: row.last_hash } : null;
  }

  async append(manager: EntityManager, entry: Omit<AuditEntry, 'id'>): Promise<AuditEntry> {
    const row = manager.create(AuditEntry, entry);
    await manager.insert(AuditEntry, row);
    await manager.query('UPDATE audit_chain SET entries = ?, last_hash = ? WHERE id = 1', [
      entry.seq,
      entry.hash,
    ]);
    return row;
  }

  latest(manager: EntityManager, action: AuditAction): Promise<AuditEntry | null> {
    return manager.findOne(AuditEntry, { where: { action }, order: { seq: 'DESC' } });
  }

  latestAbout(
    manager: EntityManager,
    subject: string,
    actions: readonly AuditAction[],
  ): Promise<AuditEntry | null> {
    return manager.findOne(AuditEntry, {
      where: { subject, action: In([...actions]) },
      order: { seq: 'DESC' },
    });
  }

  page(filter: { action?: AuditAction; subject?: string; limit: number; offset: number }) {
    return this.entries.findAndCount({
      where: {
        ...(filter.action ? { action: filter.action } : {}),
        ...(filter.subject ? { subject: filter.subject } : {}),
      },
      order: { seq: 'DESC' },
      take: filter.limit,
      skip: filter.offset,
    });
  }

  /** Rows after `afterId` in id order, for walking the chain. */
  batchAfter(afterId: number, size: number): Promise<AuditEntry[]> {
    return this.entries
      .createQueryBuilder('entry')
      .where('entry.id > :afterId', { afterId })
      .orderBy('entry.id', 'ASC')
      .take(size)
      .getMany();
  }
}
