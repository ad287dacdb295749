import { HttpStatus, Injectable } from '@nestjs/common';
import { ApiError } from '../common/api-error';
import type { AuthUser } from '../common/decorators';
import type { PluginVersionView, VersionDiff, VersionList } from './dto/plugin-lifecycle.dto';
import { PluginCatalogueService } from './plugin-catalogue.service';
import { findPluginOr404 } from './plugin-lookup';
import { PluginReviewService, VERSION_NOT_FOUND } from './plugin-review.service';
import type { PluginVersion } from './plugin-version.entity';
import { PluginVersionsRepository } from './plugin-versions.repository';
import { PluginsRepository } from './plugins.repository';
import { sha256Hex } from './plugin-storage';
import { unifiedDiff } from './unified-diff';
import { ValidatorBusyError, ValidatorPool } from '../plugin-validator';
import type { Violation } from '../plugin-validator';
import { PluginTestRunsRepository } from '../plugin-test-runs/plugin-test-runs.repository';
import { testRunMention } from '../plugin-test-runs/test-run-mention';

export { VERSION_NOT_FOUND };

/** What the versions of a plugin look like to their readers, and the reviewers' diff. */
@Injectable()
export class PluginVersionsService {
  constructor(
    private readonly plugins: PluginsRepository,
    private readonly versions: PluginVersionsRepository,
    private readonly catalogue: PluginCatalogueService,
    private readonly review: PluginReviewService,
    private readonly validator: ValidatorPool,
    private readonly testRuns: PluginTestRunsRepository,
  ) {}

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
        if (insider) view.rejection_reason = row.rejectionReason;
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
    const source = await this.read(plugin, version);
    const baseSource = base ? await this.read(plugin, base) : Buffer.alloc(0);
    const [findings, baseFindings] = await Promise.all([
      this.findings(source),
      base ? this.findings(baseSource) : Promise.resolve([]),
    ]);
    const known = new Set(baseFindings.map(findingKey));
    await this.review.recordRead(reader, plugin.id, version, sha256Hex(source));
    return {
      plugin_id: plugin.id,
      version: version.version,
      sha256: version.sha256,
      base_version: base?.version ?? null,
      base_sha256: base?.sha256 ?? null,
      diff: unifiedDiff(baseSource.toString('utf8'), source.toString('utf8'), {
        before: base ? `a/${plugin.name} ${base.version}` : '/dev/null',
        after: `b/${plugin.name} ${version.version}`,
      }),
      new_findings: findings.filter((finding) => !known.has(findingKey(finding))),
      test_run: testRunMention(await this.testRuns.newest(plugin.id, version.version)),
    };
  }

  private read(plugin: Parameters<PluginReviewService['verifiedContent']>[0], version: PluginVersion) {
    return this.review.verifiedContent(plugin, version.filePath, version.sha256, HttpStatus.GONE);
  }

  private async findings(source: Buffer): Promise<Violation[]> {
    try {
      return (await this.validator.validate(source, 'diff')).violations;
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
