// Imports nothing: the bench's bare baseline reads the same columns without loading the app.

/** The columns the public view shows, as the catalogue's listing statement reads them. */
export const PUBLIC_VIEW_COLUMNS = [
  'id',
  'name',
  'description',
  'group',
  'type',
  'author',
  'status',
  'version',
  'tags',
  'sha256',
  'created_at',
  'updated_at',
  'rating_total',
  'ratings_count',
] as const;

/** A row of PUBLIC_VIEW_COLUMNS as the driver hands it over: dates as the driver gives them. */
export type PublicViewRow = {
  id: number;
  name: string;
  description: string;
  group: string;
  type: string;
  author: string;
  status: string;
  version: string;
  /** Stored form, `,a,b,`. */
  tags: string;
  sha256: string | null;
  created_at: unknown;
  updated_at: unknown;
  rating_total: number;
  ratings_count: number;
};
