import generated from './stdlib-module-attributes.json';

/**
 * The public API of each allowed standard-library module, minus attributes that are modules,
 * generated from CPython by scripts/validator/generate-module-attributes.py. An attribute of
 * such a module that is not in its table is refused: a new door in a module is closed until
 * someone has looked at it. Third-party and framework modules have no table.
 */
const TABLES: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  Object.entries(generated.modules).map(([module, names]) => [module, new Set(names)]),
);

export type ModuleAttributeVerdict = 'allowed' | 'unknown-attribute' | 'no-table';

export function moduleAttributeVerdict(module: string, attribute: string): ModuleAttributeVerdict {
  const table = TABLES.get(module);
  if (!table) return 'no-table';
  return table.has(attribute) ? 'allowed' : 'unknown-attribute';
}

/** The Python the tables were generated from. */
export const MODULE_TABLES_PYTHON: string = generated.python;
