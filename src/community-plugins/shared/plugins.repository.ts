import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, IsNull, Not, Repository } from 'typeorm';
import { retryOnDeadlock } from '../../database/deadlock';
import { identityKey } from '../../users/identity-key';
import {
  IN_NO_LIST,
  membershipOf,
  moveBetweenLists,
  recountLists,
} from '../catalogue/index/catalogue-counts';
import type { Membership, Recount } from '../catalogue/index/catalogue-counts';
import {
  indexPlugins,
  listCode,
  reindexPlugin,
  relistPlugins,
  repairIndex,
  someUnindexed,
  unindexPlugins,
} from '../catalogue/index/plugin-search-index';
import type { IndexedPlugin, IndexRepair } from '../catalogue/index/plugin-search-index';
import type { RunQuery } from '../catalogue/index/run-query';
import { countShownChange } from '../catalogue/index/shown-changes';
import { UserPlugin } from './user-plugin.entity';

const INDEXED_FIELDS = ['name', 'description', 'author', 'tags'] as const satisfies ReadonlyArray<
  keyof UserPlugin
>;
/**
 * A plugin's move between the catalogue's lists, in the transaction that writes its row: the
 * kept counts, and the lists its runs carry (set even when the move is none, which puts right
 * runs a writer that bypassed the index left behind).
 */
async function moveLists(run: RunQuery, id: number, before: Membership, after: Membership): Promise<void> {
  await moveBetweenLists(run, before, after);
  await relistPlugins(run, [id], listCode(after));
}

const runner =
  (manager: EntityManager): RunQuery =>
  (sql, params) =>
    manager.query(sql, params) as Promise<unknown>;

/** What the search index holds of a plugin. */
const indexedOf = (plugin: UserPlugin): IndexedPlugin => ({
  id: plugin.id,
  name: plugin.name,
  description: plugin.description,
  author: plugin.author,
  tags: plugin.tags,
  list: listCode(membershipOf(plugin)),
  createdMs: plugin.createdAt.getTime(),
});

/**
 * The plugin rows every concern reads and writes: found by id, locked, inserted, updated,
 * deleted. Each write keeps the catalogue's search index and kept counts (catalogue/index/)
 * in step in its own transaction. The catalogue's lists, the manifest and the file checks
 * read the rows through their own repositories.
 */
@Injectable()
export class PluginsRepository {
  constructor(@InjectRepository(UserPlugin) private readonly plugins: Repository<UserPlugin>) {}

  findById(id: number): Promise<UserPlugin | null> {
    return this.plugins.findOneBy({ id });
  }

  /** Names compare as user names do (identityKey), on every database alike, as the unique index does. */
  nameTaken(name: string): Promise<boolean> {
    return this.plugins.existsBy({ nameKey: identityKey(name) });
  }

  countPending(userId: number, manager: EntityManager = this.plugins.manager): Promise<number> {
    return manager.countBy(UserPlugin, { userId, status: 'pending' });
  }

  /** Builds the entity (defaults applied) for insert(). */
  create(values: Omit<UserPlugin, 'id'>): UserPlugin {
    return this.plugins.create(values);
  }

  /** Inserts and fills in the id; a name taken meanwhile fails with a duplicate-key error. */
  async insert(manager: EntityManager, plugin: UserPlugin): Promise<void> {
    // A copy is inserted: a transaction that lost a write conflict runs again, and must not
    // insert the id its rolled-back run was given.
    const result = await manager.insert(UserPlugin, { ...plugin });
    plugin.id = Number((result.identifiers[0] as { id: number | string }).id);
    // Its search and tag index rows, and the catalogue's counts, in the same transaction.
    await indexPlugins(runner(manager), [indexedOf(plugin)]);
    await moveBetweenLists(runner(manager), IN_NO_LIST, membershipOf(plugin));
  }

  /**
   * Takes the plugin's row lock until the transaction ends and reads the row under it: every
   * decision on one plugin (reviews, new versions, ratings, delete) goes one at a time.
   */
  async lockAndRead(manager: EntityManager, id: number): Promise<UserPlugin | null> {
    await manager.query('UPDATE user_plugins SET id = id WHERE id = ?', [id]);
    return manager.findOneBy(UserPlugin, { id });
  }

  /**
   * A change to an indexed field (none of today's writes makes one) re-indexes the plugin; a
   * change of status or of the altered mark moves it between the catalogue's lists, whose
   * counts and the plugin's runs change in the same transaction. Every update counts a change
   * of what readers see (countShownChange), after the lists' rows: a rating appends nothing
   * to the audit chain and moves no list, yet changes the answers' ETags.
   */
  async update(manager: EntityManager, id: number, values: Partial<UserPlugin>): Promise<void> {
    const moves = values.status !== undefined || values.fileAlteredAt !== undefined;
    const before = moves ? await this.lockedListState(manager, id) : null;
    await manager.update(UserPlugin, { id }, values);
    if (before) {
      const after = {
        status: values.status ?? before.status,
        fileAlteredAt: values.fileAlteredAt !== undefined ? values.fileAlteredAt : before.fileAlteredAt,
      };
      await moveLists(runner(manager), id, membershipOf(before), membershipOf(after));
    }
    await countShownChange(runner(manager));
    if (INDEXED_FIELDS.some((field) => values[field] !== undefined)) {
      const plugin = await manager.findOneBy(UserPlugin, { id });
      if (plugin) await reindexPlugin(runner(manager), indexedOf(plugin));
    }
  }

  /** Its versions, approvals and ratings go with it (foreign keys); its audit entries stay. */
  async delete(manager: EntityManager, id: number): Promise<void> {
    const before = await this.lockedListState(manager, id);
    await unindexPlugins(runner(manager), [id]);
    const deleted = await manager.delete(UserPlugin, { id });
    if (before && deleted.affected) await moveBetweenLists(runner(manager), membershipOf(before), IN_NO_LIST);
  }

  /**
   * What decides a plugin's lists, read as committed now and locked until the transaction ends
   * (MySQL reads a snapshot otherwise; SQLite's one writer reads what is current).
   */
  private async lockedListState(
    manager: EntityManager,
    id: number,
  ): Promise<{ status: string; fileAlteredAt: unknown } | null> {
    const mysql = manager.connection.options.type === 'mysql';
    const [row] = (await manager.query(
      `SELECT \`status\`, \`file_altered_at\` FROM \`user_plugins\` WHERE \`id\` = ?${mysql ? ' FOR UPDATE' : ''}`,
      [id],
    )) as Array<{ status: string; file_altered_at: unknown }>;
    return row ? { status: row.status, fileAlteredAt: row.file_altered_at } : null;
  }

  /**
   * Counts the unfiltered lists and puts their kept counts right (catalogue/index/catalogue-counts.ts), in a
   * transaction of its own, run again when it loses to a concurrent write; which counts were wrong.
   */
  recountCatalogue(): Promise<Recount[]> {
    const manager = this.plugins.manager;
    return retryOnDeadlock(() => manager.transaction((inner) => recountLists(runner(inner))));
  }

  /**
   * Puts the search index right where older code left it wrong (catalogue/index/plugin-search-index.ts,
   * repairIndex), each window's fixes a transaction of its own, run again when it loses to a
   * concurrent write; what it did. With `ifUnindexed`, only when counts show a plugin without
   * index rows: the lists are then left to the next full run.
   */
  async repairSearchIndex({ ifUnindexed = false } = {}): Promise<IndexRepair> {
    const manager = this.plugins.manager;
    if (ifUnindexed && !(await someUnindexed(this.run))) return { indexed: 0, relisted: 0 };
    return repairIndex(runner(manager), (work) =>
      retryOnDeadlock(() => manager.transaction((inner) => work(runner(inner)))),
    );
  }

  /**
   * Marks (a Date) or clears (null) an altered file; false when the row is gone or already so.
   * An approved plugin leaves the public list while marked: its count changes with the mark.
   */
  setFileAltered(id: number, at: Date | null): Promise<boolean> {
    const manager = this.plugins.manager;
    return retryOnDeadlock(() =>
      manager.transaction(async (inner) => {
        const updated = await inner.update(
          UserPlugin,
          { id, fileAlteredAt: at === null ? Not(IsNull()) : IsNull() },
          { fileAlteredAt: at },
        );
        if (!updated.affected) return false;
        const state = await this.lockedListState(inner, id);
        if (state) {
          const before = membershipOf({ status: state.status, fileAlteredAt: at === null ? 'marked' : null });
          await moveLists(runner(inner), id, before, membershipOf(state));
        }
        return true;
      }),
    );
  }

  private readonly run: RunQuery = (sql, params) => this.plugins.query(sql, params) as Promise<unknown>;
}
