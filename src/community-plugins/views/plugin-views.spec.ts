import { UserPlugin } from '../shared/user-plugin.entity';
import { viewFor } from './plugin-audience';
import { publicViewOfRow, toAdminView, toOwnerView, toPublicView } from './plugin-views';
import type { PublicViewRow } from './public-view-columns';

function plugin(overrides: Partial<UserPlugin> = {}): UserPlugin {
  return Object.assign(new UserPlugin(), {
    id: 7,
    name: 'Title finder',
    description: 'Finds titles',
    group: 'web',
    type: 'grep',
    author: 'Alice',
    status: 'rejected',
    rejectionReason: 'Too noisy',
    userId: 3,
    reviewedByUserId: 1,
    reviewedAt: new Date('2025-01-02T03:04:05.678Z'),
    executionTimeout: 60,
    version: '2.1.0',
    tags: ['xss', 'headers'],
    sha256: 'ab'.repeat(32),
    filePath: 'title_finder_0123456789abcdef.py',
    fileMissingAt: null,
    fileAlteredAt: null,
    pendingVersion: null,
    ratingTotal: 9,
    ratingsCount: 2,
    createdAt: new Date('2025-01-01T00:00:00.000Z'),
    updatedAt: new Date('2025-01-02T03:04:05.678Z'),
    ...overrides,
  });
}

const publicView = {
  id: 7,
  name: 'Title finder',
  description: 'Finds titles',
  group: 'web',
  type: 'grep',
  author: 'Alice',
  status: 'rejected',
  approval_status: 'rejected',
  version: '2.1.0',
  tags: ['xss', 'headers'],
  sha256: 'ab'.repeat(32),
  created_at: '2025-01-01T00:00:00.000Z',
  updated_at: '2025-01-02T03:04:05.678Z',
  rating: 4.5,
  ratings_count: 2,
};

describe('plugin views', () => {
  it('public: metadata only', () => {
    expect(toPublicView(plugin())).toEqual(publicView);
  });

  it('owner: public plus rejection_reason and user_id', () => {
    expect(toOwnerView(plugin())).toEqual({ ...publicView, rejection_reason: 'Too noisy', user_id: 3 });
  });

  it('admin: owner plus reviewer, review time, execution_timeout and file_missing', () => {
    expect(toAdminView(plugin())).toEqual({
      ...publicView,
      rejection_reason: 'Too noisy',
      user_id: 3,
      reviewed_by_user_id: 1,
      reviewed_at: '2025-01-02T03:04:05.678Z',
      execution_timeout: 60,
      file_missing: false,
      file_altered: false,
      pending_version: null,
      recheck_findings: null,
      recheck_rules_version: null,
    });
    expect(toAdminView(plugin({ fileMissingAt: new Date() })).file_missing).toBe(true);
  });

  it("admin: the re-check's findings, their four members only, and its rules version", () => {
    const finding = { rule: 'forbidden-import', message: 'No', line: 1, column: 1 };
    const view = toAdminView(
      plugin({ recheck: { rulesVersion: 3, findings: [{ ...finding, extra: 'x' } as typeof finding] } }),
    );
    expect(view).toMatchObject({ recheck_findings: [finding], recheck_rules_version: 3 });
    expect(toPublicView(plugin({ recheck: { rulesVersion: 3, findings: [finding] } }))).not.toHaveProperty(
      'recheck_findings',
    );
  });

  it('falls back to created_at for rows without updated_at, and gives null for an unreviewed plugin', () => {
    const view = toAdminView(plugin({ updatedAt: null, reviewedAt: null, reviewedByUserId: null }));
    expect(view).toMatchObject({
      updated_at: '2025-01-01T00:00:00.000Z',
      reviewed_at: null,
      reviewed_by_user_id: null,
    });
  });

  it('never carries the file path or the source', () => {
    for (const view of [toPublicView(plugin()), toOwnerView(plugin()), toAdminView(plugin())]) {
      expect(JSON.stringify(view)).not.toContain('title_finder_0123456789abcdef');
      expect(Object.keys(view).filter((key) => /path|source/i.test(key))).toEqual([]);
    }
  });
});

describe('publicViewOfRow', () => {
  /** The row the listing reads for a plugin, dates as Dates (as MySQL gives them). */
  const rowOf = (entity: UserPlugin): PublicViewRow => ({
    id: entity.id,
    name: entity.name,
    description: entity.description,
    group: entity.group,
    type: entity.type,
    author: entity.author,
    status: entity.status,
    version: entity.version,
    tags: entity.tags.length === 0 ? '' : `,${entity.tags.join(',')},`,
    sha256: entity.sha256,
    created_at: entity.createdAt,
    updated_at: entity.updatedAt,
    rating_total: entity.ratingTotal,
    ratings_count: entity.ratingsCount,
  });
  const isoDate = (value: unknown) => (value as Date).toISOString();

  it('is toPublicView of the same plugin, member for member and in the same order', () => {
    for (const entity of [
      plugin(),
      plugin({ tags: [], sha256: null, updatedAt: null, ratingTotal: 0, ratingsCount: 0 }),
      plugin({ ratingTotal: 7, ratingsCount: 3, status: 'approved' }),
    ]) {
      const view = publicViewOfRow(rowOf(entity), isoDate);
      expect(view).toEqual(toPublicView(entity));
      expect(JSON.stringify(view)).toBe(JSON.stringify(toPublicView(entity)));
    }
  });
});

describe('viewFor', () => {
  const caller = (id: number, isAdmin: boolean) => ({ id, name: 'n', email: 'e', isAdmin, tokenHash: 'h' });

  it('chooses by audience and caller', () => {
    const own = plugin();
    expect(viewFor('uploader', caller(3, false), own)).toEqual(toOwnerView(own));
    expect(viewFor('uploader', caller(1, true), own)).toEqual(toOwnerView(own));
    expect(viewFor('catalogue', caller(3, false), own)).toEqual(toPublicView(own));
    expect(viewFor('catalogue', caller(1, true), own)).toEqual(toAdminView(own));
    expect(viewFor('detail', caller(3, false), own)).toEqual(toOwnerView(own));
    expect(viewFor('detail', caller(4, false), own)).toEqual(toPublicView(own));
    expect(viewFor('detail', caller(1, true), own)).toEqual(toAdminView(own));
    expect(viewFor('reviewer', caller(1, true), own)).toEqual(toAdminView(own));
  });
});
