import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { canonicalJson } from '../common/canonical-json';
import { Clock } from '../common/clock';
import { Transactions } from '../database/transactions';
import type { AuditAction, AuditActor, AuditEntry } from './audit-entry.entity';
import { AuditRepository } from './audit.repository';

export type AuditDetails = Record<string, string | number | boolean | null>;

export interface AuditRecord {
  actor: AuditActor;
  actorUserId?: number | null;
  action: AuditAction;
  subject: string;
  details?: AuditDetails;
}

export interface AuditFilter {
  action?: AuditAction;
  subject?: string;
  limit: number;
  offset: number;
}

export type ChainCheck =
  { intact: true; entries: number } | { intact: false; entries: number; problem: string };

/** The row as hashed: every column but the id and the hash itself. */
export function entryHash(entry: Omit<AuditEntry, 'id' | 'hash'>): string {
  const row = canonicalJson({
    seq: entry.seq,
    at: entry.at,
    actor: entry.actor,
    actor_user_id: entry.actorUserId,
    action: entry.action,
    subject: entry.subject,
    details: JSON.parse(entry.details) as unknown,
  });
  return createHash('sha256')
    .update(entry.prevHash + row)
    .digest('hex');
}

const CHAIN_BATCH = 500;

/**
 * The append-only, hash-chained audit log. Appends take the one-row chain head
 * (`audit_chain`) with a write lock first, so they are serialised on SQLite and on every
 * MySQL node alike; `seq` and `prev_hash` are unique, so even an append that bypassed the
 * head could not fork the chain. This class has no update or delete.
 */
@Injectable()
export class AuditLog {
  constructor(
    private readonly entries: AuditRepository,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
  ) {}

  /**
   * Appends within the caller's transaction, so the entry commits exactly with the change it
   * records. Call it as the transaction's last write: the head stays locked until the commit.
   */
  async append(manager: EntityManager, record: AuditRecord): Promise<AuditEntry> {
    await this.entries.lockChain(manager);
    const head = await this.entries.head(manager, true);
    if (!head) throw new Error('The audit chain head (audit_chain, id 1) is missing');
    const entry: Omit<AuditEntry, 'id' | 'hash'> = {
      seq: head.entries + 1,
      at: this.clock.now().toISOString(),
      actor: record.actor,
      actorUserId: record.actorUserId ?? null,
      action: record.action,
      subject: record.subject,
      details: canonicalJson(record.details ?? {}),
      prevHash: head.lastHash,
    };
    return this.entries.append(manager, { ...entry, hash: entryHash(entry) });
  }

  /** Holds the chain until the caller's transaction ends: for a check-then-append that must not race. */
  lockChain(manager: EntityManager): Promise<void> {
    return this.entries.lockChain(manager);
  }

  /** The newest entry of an action, read under the caller's lock of the chain. */
  latest(manager: EntityManager, action: AuditAction): Promise<AuditEntry | null> {
    return this.entries.latest(manager, action);
  }

  /**
   * The newest entry about `subject` among `actions`; under the caller's lock of the chain
   * when `manager` is a transaction's that holds it, else a plain read.
   */
  latestAbout(
    subject: string,
    actions: readonly AuditAction[],
    manager: EntityManager = this.transactions.manager,
  ): Promise<AuditEntry | null> {
    return this.entries.latestAbout(manager, subject, actions);
  }

  async list(filter: AuditFilter): Promise<{ total: number; entries: AuditEntry[] }> {
    const [entries, total] = await this.entries.page(filter);
    return { total, entries };
  }

  /**
   * Walks the chain in order: each row's `prev_hash` is the hash before it and its `hash`
   * recomputes; the head's count and last hash match the last row, so a row cut off the end
   * shows too. Names the first row that does not follow.
   */
  async verify(): Promise<ChainCheck> {
    let previous = '';
    let expectedSeq = 1;
    let lastId = 0;
    for (;;) {
      const batch = await this.entries.batchAfter(lastId, CHAIN_BATCH);
      for (const entry of batch) {
        let recomputed: string | null;
        try {
          recomputed = entryHash(entry);
        } catch {
          recomputed = null;
        }
        if (entry.seq !== expectedSeq || entry.prevHash !== previous || recomputed !== entry.hash) {
          return {
            intact: false,
            entries: expectedSeq - 1,
            problem: `entry ${expectedSeq} (row id ${entry.id}, seq ${entry.seq}): its hash does not follow the chain`,
          };
        }
        previous = entry.hash;
        expectedSeq += 1;
        lastId = entry.id;
      }
      if (batch.length < CHAIN_BATCH) break;
    }
    const count = expectedSeq - 1;
    const head = await this.entries.head();
    if (!head || head.entries !== count || head.lastHash !== previous) {
      return {
        intact: false,
        entries: count,
        problem: `entry ${count + 1}: the chain head records ${head ? head.entries : 'no'} entries, the log has ${count}`,
      };
    }
    return { intact: true, entries: count };
  }
}
