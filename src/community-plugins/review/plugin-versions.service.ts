import { HttpStatus, Injectable } from '@nestjs/common';
import { ApiError } from '../../common/api-error';
import type { AuthUser } from '../../common/decorators';
import type { PluginVersionView, VersionDiff, VersionList } from '../dto/plugin-lifecycle.dto';
import { PluginCatalogueService } from '../catalogue/plugin-catalogue.service';
import { findPluginOr404 } from '../shared/plugin-lookup';
import { PluginReviewService } from './plugin-review.service';
import { VERSION_NOT_FOUND } from './review-rules';
import type { PluginVersion } from '../shared/plugin-version.entity';
import { PluginVersionsRepository } from '../shared/plugin-versions.repository';
import { PluginsRepository } from '../shared/plugins.repository';
import { sha256Hex } from '../files/plugin-storage';
import { withHeaders, type DiffHunks } from './unified-diff';
import { DiffBusyError, DiffPool } from './diff-pool';
import { DiffCache } from './diff-cache';
import { isNoVerdict, ValidatorBusyError, ValidatorPool } from '../../plugin-validator';
import type { Violation } from '../../plugin-validator';
import { testRunMention } from '../../plugin-test-runs/test-run-mention';
import { Transactions } from '../../database/transactions';
import { TestRunSummaries } from '../../plugin-test-runs/test-run-summaries';

export const DIFF_BUSY = 'Diff is busy';
/** A guess, as the validator's: one diff takes 0.4 s at most, and the queue is short. */
const BUSY_RETRY_AFTER_SECONDS = '5';

/**
 * What reviewers' diffs keep: the largest diff (two unrelated 256 KB files) is about 1 MB as a
 * JavaScript string, so this holds dozens of those and thousands of ordinary ones, a review
 * queue's worth.
 */
export const DIFF_CACHE_BYTES = 32 * 1024 * 1024;

/** A version's bytes, read through the digest check, and their sha256. */
interface VersionBytes {
  bytes: Buffer;
  digest: string;
}

/** What a pair of versions' diff computes once: the hunks and the findings new in the later one. */
interface PairDiff extends DiffHunks {
  newFindings: Violation[];
}

/** What the versions of a plugin look like to their readers, and the reviewers' diff. */
@Injectable()
export class PluginVersionsService {
  constructor(
    private readonly plugins: PluginsRepository,
    private readonly versions: PluginVersionsRepository,
    private readonly catalogue: PluginCatalogueService,
    private readonly review: PluginReviewService,
    private readonly validator: ValidatorPool,
    private readonly testRuns: TestRunSummaries,
    private readonly diffs: DiffPool,
    private readonly transactions: Transactions,
  ) {}

  /**
   * By the digests of the pair's bytes (as read, so a row without its digest has one too):
   * versions are immutable and addressed by them, so a kept diff never goes stale. A verdict the
   * validator could not give (`internal-error`, `analysis-too-slow`) is not kept.
   */
  private readonly pairs = new DiffCache<PairDiff>(
    DIFF_CACHE_BYTES,
    (pair) => 2 * (pair.hunks.length + JSON.stringify(pair.newFindings).length),
    (pair) => !pair.newFindings.some((finding) => isNoVerdict(finding.rule)),
  );

  /** Every version for the uploader and admins (admins also see the reviews), approved ones for everyone else. */
  async list(caller: AuthUser, id: number | null): Promise<VersionList> {
    const plugin = await this.catalogue.findVisible(caller, id);
    const insider = caller.isAdmin || plugin.userId === caller.id;
    const rows = (await this.versions.ofPlugin(plugin.id)).filter(
      (version) => insider || version.status === 'approved',
    );
    const approvals = caller.isAdmin ? await this.versions.approvalsOf(rows.map((row) => row.id)) : [];
    return {
      plugin_id: plugin.id,
      versions: rows.map((row) => {
        const view: PluginVersionView = {
          version: row.version,
          status: row.status,
          sha256: row.sha256,
          changelog: row.changelog,
          created_at: row.createdAt.toISOString(),
        };
        if (insider) {
          view.rejection_reason = row.rejectionReason;
          // What the validator warns about: the uploader's and reviewers' only, it may hint at the code.
          view.warnings = shownWarnings(row.validatorWarnings);
        }
        if (caller.isAdmin) {
          view.user_id = row.userId;
          view.reviewed_by_user_id = row.reviewedByUserId;
          view.reviewed_at = row.reviewedAt?.toISOString() ?? null;
          view.approvals = approvals
            .filter((approval) => approval.versionId === row.id)
            .map((approval) => ({ user_id: approval.userId, at: approval.at.toISOString() }));
        }
        return view;
      }),
    };
  }

  /**
   * The version's source against the latest version approved before it (nothing for a first
   * version), both read through the digest check, and the validator findings that are new in it.
   * The diff shows the version whole, so serving it records the reader's read of that version.
   */
  async diff(reader: AuthUser, id: number | null, versionText: string): Promise<VersionDiff> {
    const plugin = await findPluginOr404(this.plugins, id);
    const all = await this.versions.ofPlugin(plugin.id);
    const version = all.find((row) => row.version === versionText);
    if (!version) throw new ApiError(HttpStatus.NOT_FOUND, VERSION_NOT_FOUND);
    const base = all.find((row) => row.id < version.id && row.status === 'approved') ?? null;
    // Both files through their digest check before anything is served, from the cache too.
    const source = await this.read(plugin, version);
    const baseSource = base ? await this.read(plugin, base) : Buffer.alloc(0);
    const digest = sha256Hex(source);
    const baseDigest = base ? sha256Hex(baseSource) : null;
    const pair = await this.pairs.get(`${baseDigest ?? 'none'}:${digest}`, () =>
      this.computePair(
        String(reader.id),
        { bytes: source, digest },
        baseDigest === null ? null : { bytes: baseSource, digest: baseDigest },
      ),
    );
    await this.review.recordRead(reader, plugin.id, version, digest);
    // Read at every request, never kept with the pair: a run started or ended since shows. The
    // uploader's own admin account sees none: the runs are the reviewers', whose routes refuse it.
    const ownPlugin = await this.review.isSelfReview(this.transactions.manager, reader, plugin, version);
    const runs = ownPlugin ? [] : await this.testRuns.newestOfEachReviewer(plugin.id, version.version);
    return {
      plugin_id: plugin.id,
      version: version.version,
      sha256: version.sha256,
      base_version: base?.version ?? null,
      base_sha256: base?.sha256 ?? null,
      diff: withHeaders(pair.hunks, {
        before: base ? `a/${plugin.name} ${base.version}` : '/dev/null',
        after: `b/${plugin.name} ${version.version}`,
      }),
      approximate: pair.approximate,
      new_findings: pair.newFindings,
      warnings: shownWarnings(version.validatorWarnings),
      test_run: testRunMention(runs[0]),
      test_runs: runs,
    };
  }

  private async computePair(
    reader: string,
    source: VersionBytes,
    base: VersionBytes | null,
  ): Promise<PairDiff> {
    const [hunks, findings, baseFindings] = await Promise.all([
      this.hunks(reader, base?.bytes ?? Buffer.alloc(0), source.bytes),
      this.findings(source),
      base ? this.findings(base) : Promise.resolve([]),
    ]);
    const known = new Set(baseFindings.map(findingKey));
    return { ...hunks, newFindings: findings.filter((finding) => !known.has(findingKey(finding))) };
  }

  private async hunks(reader: string, baseSource: Buffer, source: Buffer): Promise<DiffHunks> {
    try {
      return await this.diffs.diff(reader, baseSource.toString('utf8'), source.toString('utf8'));
    } catch (error) {
      if (error instanceof DiffBusyError)
        throw new ApiError(HttpStatus.SERVICE_UNAVAILABLE, DIFF_BUSY, undefined, {
          'Retry-After': BUSY_RETRY_AFTER_SECONDS,
        });
      throw error;
    }
  }

  private read(plugin: Parameters<PluginReviewService['verifiedContent']>[0], version: PluginVersion) {
    return this.review.verifiedContent(plugin, version.filePath, version.sha256, HttpStatus.GONE);
  }

  /**
   * Queued under the file's digest, not under one name for every diff: a reviewer opening eight
   * diffs at once (sixteen files) would otherwise pass the validator's cap per uploader and be
   * told it is busy. The validator's whole queue still bounds them.
   */
  private async findings(file: VersionBytes): Promise<Violation[]> {
    try {
      return (await this.validator.validate(file.bytes, `diff ${file.digest}`)).violations;
    } catch (error) {
      if (error instanceof ValidatorBusyError)
        throw new ApiError(HttpStatus.SERVICE_UNAVAILABLE, 'Validator is busy', undefined, {
          'Retry-After': '5',
        });
      throw error;
    }
  }
}

/** A finding is the same in both versions when its rule and message are: lines move between versions. */
const findingKey = (finding: Violation) => `${finding.rule}\u0000${finding.message}`;

/** A version's kept warnings as views show them: each finding's four fields. */
const shownWarnings = (warnings: Violation[] | null): Violation[] | null =>
  warnings?.map(({ rule, message, line, column }) => ({ rule, message, line, column })) ?? null;
