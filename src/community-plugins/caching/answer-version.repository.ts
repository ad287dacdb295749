import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock';
import { PlainReads } from '../../database/plain-reads';
import { CATALOGUE_VIEWS } from '../catalogue/index/catalogue-counts';

/** The counters a version is made of, in the order it lists them, each read by its primary key. */
const PARTS: ReadonlyArray<readonly [string, string]> = [
  ['serial', 'SELECT `entries` FROM `audit_chain` WHERE `id` = 1'],
  ...CATALOGUE_VIEWS.map(
    (view) => [view, `SELECT \`changes\` FROM \`catalogue_counts\` WHERE \`name\` = '${view}'`] as const,
  ),
  ['shown', 'SELECT `changes` FROM `plugin_shown_changes` WHERE `id` = 1'],
];
const VERSION_SQL = 'SELECT ' + PARTS.map(([name, sql]) => `(${sql}) AS \`${name}\``).join(', ');

const settled = () => undefined;

/** How long a version read serves as the tag of full answers (`recent`). */
export const RECENT_VERSION_MS = 1000;

/**
 * A version of everything a reader is shown of the plugins, read from counters that every
 * write already keeps rather than from the rows: the audit chain's head count (every upload,
 * review and delete appends), the lists' change counts (every move between lists, the altered
 * mark included) and the shown changes (catalogue/index/shown-changes.ts: ratings, the missing
 * mark). A write that changes an
 * answer raises one of them in its own transaction, so an unchanged version is an unchanged
 * answer. One statement: one snapshot of all four; a plain read, prepared once, since every
 * poll makes it (docs/decisions/plain-reads.md).
 */
@Injectable()
export class AnswerVersionRepository {
  private last: { version: string; readAt: number } | null = null;
  /** When a write of this process was last answered: a read begun before it is not kept. */
  private forgottenAt = -Infinity;
  /** The read under way, and the one that callers arriving during it share (`current`). */
  private inFlight: Promise<string> | null = null;
  private following: Promise<string> | null = null;

  constructor(
    private readonly plain: PlainReads,
    private readonly clock: Clock,
  ) {}

  /**
   * The version, from a read begun after this call: a read already in flight may have begun
   * before a write this caller saw answered, so the caller shares the next one, which begins
   * when that ends (with every other caller that arrived meanwhile). Under load the polls of
   * many connections share one read; a caller alone reads at once.
   */
  current(): Promise<string> {
    if (this.inFlight === null) return this.startRead();
    this.following ??= this.inFlight.then(settled, settled).then(() => {
      this.following = null;
      return this.startRead();
    });
    return this.following;
  }

  private startRead(): Promise<string> {
    const read = this.read();
    this.inFlight = read;
    const done = () => {
      if (this.inFlight === read) this.inFlight = null;
    };
    read.then(done, done);
    return read;
  }

  private async read(): Promise<string> {
    const readAt = this.clock.now().getTime();
    const [row] = await this.plain.fixedRows<Record<string, number | string | null>>(VERSION_SQL, []);
    // A counter's row that is not there yet counts as 0.
    const version = PARTS.map(([name]) => Number(row?.[name] ?? 0)).join('.');
    if (readAt >= this.forgottenAt && (this.last === null || readAt >= this.last.readAt))
      this.last = { version, readAt };
    return version;
  }

  /**
   * A version read less than RECENT_VERSION_MS ago, or null. It may be older than the rows an
   * answer then reads, never newer, and the counters only grow: as the tag of a full answer it
   * can only make the next poll fetch again, never keep a changed answer. Whether a copy is
   * current (a 304) is always read fresh (`current`). docs/decisions/answer-versions.md
   */
  recent(): string | null {
    if (this.last === null) return null;
    const age = this.clock.now().getTime() - this.last.readAt;
    // A clock set back makes the age negative: not a moment ago, then.
    return age >= 0 && age < RECENT_VERSION_MS ? this.last.version : null;
  }

  /** A write of this process was answered: its full answers' tags are read fresh again. */
  forget(): void {
    this.last = null;
    this.forgottenAt = this.clock.now().getTime();
  }
}
