import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, In, IsNull, LessThan, Not, QueryDeepPartialEntity, Repository } from 'typeorm';
import { persistedValue } from '../database/persisted-value';
import { PlainReads } from '../database/plain-reads';
import { AccessToken } from './access-token.entity';
import { UserLoginToken } from './user-login-token.entity';
import { User } from './user.entity';

/** What the guard needs of a token's record and its user, read in one indexed query. */
export interface TokenOwner {
  userId: number;
  name: string;
  email: string;
  /** Confirmed and not deactivated: the only owner whose tokens are honoured. */
  isActive: boolean;
  isAdmin: boolean;
}

/** A login token's owner, with what the guard needs to note the use (LoginsRepository.noteUse). */
export interface LoginOwner extends TokenOwner {
  loginId: number;
  /** As the driver returns it in a plain row. */
  lastUsedAt: unknown;
}

export interface AdminSummary {
  id: number;
  name: string;
  email: string;
}

/** A new OTP: its secret and issue time, and the issue windows as they stand with it counted. */
export interface OtpIssue {
  secret: string;
  issuedAt: Date;
  hourStart: Date;
  hourCount: number;
  dayStart: Date;
  dayCount: number;
}

/**
 * Every query on `users` and `user_login_tokens` (but a login's list, end and use, in
 * LoginsRepository): the app's features and svc-admin reach these tables only through here.
 * Methods that write take the `manager` of the transaction they belong to; without one they
 * commit on their own.
 */
@Injectable()
export class UsersRepository {
  private ownerSql?: string;

  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    @InjectRepository(UserLoginToken) private readonly tokens: Repository<UserLoginToken>,
    private readonly reads: PlainReads,
  ) {}

  // ----- users -----

  /** Up to two users: the one whose email has the key and the one whose name has it. */
  findByEmailOrNameKey(key: string): Promise<User[]> {
    return this.users.find({ where: [{ emailKey: key }, { nameKey: key }], take: 2 });
  }

  findByEmailKey(key: string, manager: EntityManager = this.users.manager): Promise<User | null> {
    return manager.findOneBy(User, { emailKey: key });
  }

  /**
   * The two columns an activation mail needs, as plain values: the outbox worker reads them
   * for every address asked about, and building a whole entity only when a row exists would
   * cost that case alone more time.
   */
  async activationState(emailKey: string): Promise<{ email: string; isActive: boolean } | null> {
    const row = await this.users
      .createQueryBuilder('u')
      .select('u.email', 'email')
      .addSelect('u.is_active', 'isActive')
      .where('u.email_key = :emailKey', { emailKey })
      .getRawOne<{ email: string; isActive: number | boolean | string }>();
    return row ? { email: row.email, isActive: Number(row.isActive) === 1 } : null;
  }

  findById(id: number, manager: EntityManager = this.users.manager): Promise<User | null> {
    return manager.findOneBy(User, { id });
  }

  nameKeyTaken(nameKey: string): Promise<boolean> {
    return this.users.existsBy({ nameKey });
  }

  emailKeyTaken(emailKey: string): Promise<boolean> {
    return this.users.existsBy({ emailKey });
  }

  /** Inserts the user and returns its id; a key another user holds fails with a duplicate-key error. */
  async insert(
    values: Omit<QueryDeepPartialEntity<User>, 'id'>,
    manager: EntityManager = this.users.manager,
  ): Promise<number> {
    const result = await manager.insert(User, values);
    return Number((result.identifiers[0] as { id: unknown }).id);
  }

  /**
   * Whether the user is one of `others`, or shares a mailbox with one of them: one query by
   * primary keys, in the caller's transaction. A mailbox not yet filled in (null) matches nothing.
   */
  async sharesMailbox(manager: EntityManager, userId: number, others: readonly number[]): Promise<boolean> {
    if (others.length === 0) return false;
    const rows = (await manager.query(
      `SELECT 1 AS found FROM users me JOIN users other ON other.id = me.id OR other.mailbox = me.mailbox
       WHERE me.id = ? AND other.id IN (${others.map(() => '?').join(', ')}) LIMIT 1`,
      [userId, ...others],
    )) as unknown[];
    return rows.length > 0;
  }

  /** The usernames of `ids` by id (a list naming who did what reads only these columns). */
  async namesOf(ids: readonly number[]): Promise<Map<number, string>> {
    if (ids.length === 0) return new Map();
    const rows = await this.users.find({
      select: { id: true, name: true },
      where: { id: In([...new Set(ids)]) },
    });
    return new Map(rows.map((row) => [row.id, row.name]));
  }

  /**
   * Only the listed columns, so svc-admin list (which runs no migration) also reads a table
   * whose newer columns a pending migration has yet to add.
   */
  listAdmins(): Promise<AdminSummary[]> {
    return this.users.find({
      select: { id: true, name: true, email: true },
      where: { isAdmin: true },
      order: { email: 'ASC' },
    });
  }

  findByEmailKeys(emailKeys: string[]): Promise<User[]> {
    return this.users.findBy({ emailKey: In(emailKeys) });
  }

  /** Conditional, so of two starts promoting one user only one does (and reports) it. */
  async promoteIfNotAdmin(manager: EntityManager, id: number): Promise<boolean> {
    const result = await manager.update(User, { id, isAdmin: false }, { isAdmin: true });
    return Boolean(result.affected);
  }

  /** Conditional, so of two demotions at once only one changes the row (and is recorded). */
  async demoteIfAdmin(manager: EntityManager, id: number): Promise<boolean> {
    const result = await manager.update(User, { id, isAdmin: true }, { isAdmin: false });
    return Boolean(result.affected);
  }

  async deactivateIfInService(manager: EntityManager, id: number, at: Date): Promise<boolean> {
    const result = await manager.update(User, { id, deactivatedAt: IsNull() }, { deactivatedAt: at });
    return Boolean(result.affected);
  }

  async reactivateIfDeactivated(manager: EntityManager, id: number): Promise<boolean> {
    const result = await manager.update(User, { id, deactivatedAt: Not(IsNull()) }, { deactivatedAt: null });
    return Boolean(result.affected);
  }

  async markEmailConfirmed(manager: EntityManager, id: number): Promise<void> {
    await manager.update(User, { id }, { isActive: true });
  }

  async clearPassword(manager: EntityManager, id: number): Promise<void> {
    await manager.update(User, { id }, { password: null });
  }

  /**
   * Serialises the writes of one user that count-then-write (the pending-plugin cap, the
   * one active session) across processes. A no-op UPDATE rather than SELECT ... FOR UPDATE:
   * on MySQL both take the row's exclusive lock, and on SQLite only a write takes the
   * database's write lock at once, before the transaction reads (a deferred transaction that
   * reads first could not upgrade to writing later without failing).
   */
  async lockUser(manager: EntityManager, id: number): Promise<void> {
    await manager.query('UPDATE users SET id = id WHERE id = ?', [id]);
  }

  // ----- the password-reset OTP (columns of users) -----

  /**
   * Writes a new OTP (fresh secret, no failures) and its issue counts; the caller holds the
   * user's row lock (lockUser) and has checked the issue windows.
   */
  async writeOtpIssue(manager: EntityManager, userId: number, issue: OtpIssue): Promise<void> {
    await manager.update(
      User,
      { id: userId },
      {
        otpSecretKey: issue.secret,
        otpIssuedAt: issue.issuedAt,
        otpFailedAttempts: 0,
        otpHourStart: issue.hourStart,
        otpHourCount: issue.hourCount,
        otpDayStart: issue.dayStart,
        otpDayCount: issue.dayCount,
      },
    );
  }

  /** Locks the account if it is not locked yet: true for the one request that did. */
  async lockIfUnlocked(manager: EntityManager, userId: number, at: Date): Promise<boolean> {
    const result = await manager.update(User, { id: userId, lockedAt: IsNull() }, { lockedAt: at });
    return Boolean(result.affected);
  }

  /**
   * Claims one failed-check slot of the outstanding OTP (issued after `bornAfter`, fewer
   * than `maxFailures` failures) in one conditional UPDATE, before the code is compared.
   */
  async claimOtpAttempt(userId: number, bornAfter: Date, maxFailures: number): Promise<boolean> {
    const claimed = await this.users
      .createQueryBuilder()
      .update(User)
      .set({ otpFailedAttempts: () => 'otp_failed_attempts + 1' })
      .where(
        'id = :id AND otp_issued_at IS NOT NULL AND otp_issued_at > :bornAfter AND otp_failed_attempts < :max',
        { id: userId, bornAfter: this.dbDate(bornAfter), max: maxFailures },
      )
      .execute();
    return Boolean(claimed.affected);
  }

  otpState(userId: number): Promise<Pick<User, 'id' | 'otpSecretKey' | 'otpIssuedAt'> | null> {
    return this.users.findOne({
      where: { id: userId },
      select: { id: true, otpSecretKey: true, otpIssuedAt: true },
    });
  }

  /** Hands a claimed slot back, if the OTP it was claimed for is still the outstanding one. */
  async returnOtpAttempt(userId: number, secret: string): Promise<void> {
    await this.users
      .createQueryBuilder()
      .update(User)
      .set({ otpFailedAttempts: () => 'otp_failed_attempts - 1' })
      .where('id = :id AND otp_secret_key = :secret AND otp_failed_attempts > 0', { id: userId, secret })
      .execute();
  }

  /**
   * Uses up the OTP whose secret is `secret` in the same conditional write that applies
   * `changes`; false when another request used it first.
   */
  async consumeOtp(
    manager: EntityManager,
    userId: number,
    secret: string,
    changes: QueryDeepPartialEntity<User> & { otpSecretKey: string },
  ): Promise<boolean> {
    const result = await manager
      .createQueryBuilder()
      .update(User)
      .set({ ...changes, otpIssuedAt: null, otpFailedAttempts: 0 })
      .where('id = :id AND otp_secret_key = :secret AND otp_issued_at IS NOT NULL', { id: userId, secret })
      .execute();
    return Boolean(result.affected);
  }

  /** Hand-written conditions get values as the driver stores them (see persistedValue). */
  private dbDate(date: Date): unknown {
    return persistedValue(this.users, 'otpIssuedAt', date);
  }

  // ----- login tokens -----

  /**
   * Records a token's hash; the user's expired records are swept at the same time. Nothing
   * reads the new row back, so TypeORM is told not to: it would otherwise select the row's
   * defaulted columns after every login's insert (neither driver has RETURNING for it).
   */
  async recordToken(record: Omit<UserLoginToken, 'id' | 'user'>): Promise<void> {
    await this.tokens.delete({ userId: record.userId, expiresAt: LessThan(record.createdAt) });
    await this.tokens.createQueryBuilder().insert().values(record).updateEntity(false).execute();
  }

  async revokeToken(tokenHash: string): Promise<void> {
    await this.tokens.delete({ tokenHash });
  }

  /**
   * Ends every session of the user: the tokens recorded so far (and its personal access
   * tokens) are deleted, and the credential
   * generation is raised, so a token a login records later under the generation it read
   * before this change is refused too (see ownerQuery).
   */
  async revokeAllTokens(manager: EntityManager, userId: number): Promise<void> {
    await manager
      .createQueryBuilder()
      .update(User)
      .set({ credentialGeneration: () => 'credential_generation + 1' })
      .where('id = :userId', { userId })
      .execute();
    await manager.delete(UserLoginToken, { userId });
    await manager.delete(AccessToken, { userId });
  }

  /**
   * Stores a new password hash and raises the credential generation in one write, bound to
   * the generation the caller read (under the user's row lock); false when it moved.
   */
  async changePassword(
    manager: EntityManager,
    userId: number,
    hash: string,
    generation: number,
  ): Promise<boolean> {
    const result = await manager
      .createQueryBuilder()
      .update(User)
      .set({ password: hash, credentialGeneration: () => 'credential_generation + 1' })
      .where('id = :userId AND credential_generation = :generation', { userId, generation })
      .execute();
    return Boolean(result.affected);
  }

  /**
   * Ends every session of the user but the login `keepTokenHash`, which moves to the new
   * generation (revokeAllTokens, then that one record kept): a token a login records later
   * under the generation it read before this change is refused.
   */
  async revokeAllTokensBut(manager: EntityManager, userId: number, keepTokenHash: string): Promise<void> {
    await manager
      .createQueryBuilder()
      .update(User)
      .set({ credentialGeneration: () => 'credential_generation + 1' })
      .where('id = :userId', { userId })
      .execute();
    await manager.delete(UserLoginToken, { userId, tokenHash: Not(keepTokenHash) });
    await manager.delete(AccessToken, { userId });
    const user = await manager.findOneByOrFail(User, { id: userId });
    await manager.update(
      UserLoginToken,
      { userId, tokenHash: keepTokenHash },
      { credentialGeneration: user.credentialGeneration },
    );
  }

  /** The credential generation a login token was recorded under; null when it is gone. */
  async loginGeneration(manager: EntityManager, tokenHash: string): Promise<number | null> {
    return (await manager.findOneBy(UserLoginToken, { tokenHash }))?.credentialGeneration ?? null;
  }

  /**
   * One indexed lookup: the unique token_hash, then the user by primary key; a token of an
   * older credential generation than its user's names no owner.
   */
  ownerQuery(tokenHash: string) {
    return this.tokens
      .createQueryBuilder('token')
      .innerJoin('token.user', 'user')
      .select('token.user_id', 'userId')
      .addSelect('token.id', 'loginId')
      .addSelect('token.last_used_at', 'lastUsedAt')
      .addSelect('user.name', 'name')
      .addSelect('user.email', 'email')
      .addSelect('user.is_active', 'isActive')
      .addSelect('user.deactivated_at', 'deactivatedAt')
      .addSelect('user.is_admin', 'isAdmin')
      .where('token.token_hash = :tokenHash', { tokenHash })
      .andWhere('token.credential_generation = user.credential_generation');
  }

  /**
   * Every authenticated request runs this, so it skips the query builder and entity
   * hydration: the SQL of ownerQuery is built once, and the row is read plain (booleans come
   * as 0/1 from both drivers, hence the conversions), from a statement prepared once.
   */
  async findOwner(tokenHash: string): Promise<LoginOwner | null> {
    this.ownerSql ??= this.ownerQuery('').getQueryAndParameters()[0];
    const [row] = await this.reads.fixedRows<{
      userId: number;
      loginId: number;
      lastUsedAt: unknown;
      name: string;
      email: string;
      isActive: unknown;
      deactivatedAt: unknown;
      isAdmin: unknown;
    }>(this.ownerSql, [tokenHash]);
    if (!row) return null;
    return {
      userId: Number(row.userId),
      loginId: Number(row.loginId),
      lastUsedAt: row.lastUsedAt,
      name: row.name,
      email: row.email,
      isActive: Boolean(Number(row.isActive)) && row.deactivatedAt === null,
      isAdmin: Boolean(Number(row.isAdmin)),
    };
  }
}
