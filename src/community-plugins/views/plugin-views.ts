import type { UserPlugin } from '../user-plugin.entity';

/** What any authenticated user may see: metadata only. */
export interface PublicPluginView {
  id: number;
  name: string;
  description: string;
  group: string;
  type: string;
  author: string;
  status: string;
  sha256: string | null;
  created_at: string;
  updated_at: string;
}

/** The uploader also sees why a plugin was rejected. */
export interface OwnerPluginView extends PublicPluginView {
  rejection_reason: string | null;
  user_id: number;
}

/** Admins also see who reviewed it, when, and its resource limit. */
export interface AdminPluginView extends OwnerPluginView {
  reviewed_by_user_id: number | null;
  reviewed_at: string | null;
  execution_timeout: number;
}

/**
 * Each view names its fields one by one, so a column added to the entity reaches no client
 * until a view chooses to show it. `file_path` and the source are in none of them.
 */
export function toPublicView(plugin: UserPlugin): PublicPluginView {
  return {
    id: plugin.id,
    name: plugin.name,
    description: plugin.description,
    group: plugin.group,
    type: plugin.type,
    author: plugin.author,
    status: plugin.status,
    sha256: plugin.sha256,
    created_at: plugin.createdAt.toISOString(),
    // Rows from before updated_at existed were last changed when they were made.
    updated_at: (plugin.updatedAt ?? plugin.createdAt).toISOString(),
  };
}

export function toOwnerView(plugin: UserPlugin): OwnerPluginView {
  return { ...toPublicView(plugin), rejection_reason: plugin.rejectionReason, user_id: plugin.userId };
}

export function toAdminView(plugin: UserPlugin): AdminPluginView {
  return {
    ...toOwnerView(plugin),
    reviewed_by_user_id: plugin.reviewedByUserId,
    reviewed_at: plugin.reviewedAt?.toISOString() ?? null,
    execution_timeout: plugin.executionTimeout,
  };
}
