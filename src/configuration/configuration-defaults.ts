import defaultsFile from './defaults.json';

/** One seeded configuration item, as the data file describes it. */
export interface DefaultItem {
  key: string;
  value: string;
  section: string;
  descrip: string;
}

/** Column sizes of the `configuration` table (see the migration). */
export const KEY_MAX = 100;
export const SECTION_MAX = 64;
export const VALUE_MAX = 1024;
export const DESCRIP_MAX = 512;

const NAME_PATTERN = /^[a-z][a-z0-9_]*$/;

/**
 * Checks the shape of the defaults file and flattens it into items. A bad file is a
 * programming error: it stops the boot (and fails the unit spec) instead of seeding nonsense.
 */
export function parseDefaults(file: unknown): DefaultItem[] {
  const sections = (file as { sections?: unknown })?.sections;
  if (!Array.isArray(sections) || sections.length === 0)
    throw new Error('defaults: "sections" must be a non-empty list');
  const items: DefaultItem[] = [];
  const seenSections = new Set<string>();
  const seenKeys = new Set<string>();
  for (const section of sections as Array<{ name?: unknown; items?: unknown }>) {
    const name = section?.name;
    if (typeof name !== 'string' || !NAME_PATTERN.test(name) || name.length > SECTION_MAX) {
      throw new Error(`defaults: bad section name ${JSON.stringify(name)}`);
    }
    if (seenSections.has(name)) throw new Error(`defaults: section ${name} appears twice`);
    seenSections.add(name);
    if (!Array.isArray(section.items) || section.items.length === 0) {
      throw new Error(`defaults: section ${name} has no items`);
    }
    for (const item of section.items as Array<Record<string, unknown>>) {
      const { key, value, descrip } = item ?? {};
      if (typeof key !== 'string' || !NAME_PATTERN.test(key) || key.length > KEY_MAX) {
        throw new Error(`defaults: bad key ${JSON.stringify(key)} in section ${name}`);
      }
      if (seenKeys.has(key)) throw new Error(`defaults: key ${key} appears twice`);
      seenKeys.add(key);
      if (typeof value !== 'string' || value.length > VALUE_MAX)
        throw new Error(`defaults: bad value of ${key}`);
      if (typeof descrip !== 'string' || descrip.length > DESCRIP_MAX)
        throw new Error(`defaults: bad descrip of ${key}`);
      items.push({ key, value, section: name, descrip });
    }
  }
  return items;
}

/** The defaults shipped in `defaults.json`, checked once when first needed. */
let cached: DefaultItem[] | undefined;
export function configurationDefaults(): DefaultItem[] {
  cached ??= parseDefaults(defaultsFile);
  return cached;
}
