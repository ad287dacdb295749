import { spawnSync } from 'node:child_process';
import path from 'node:path';

const SCRIPT = path.resolve(__dirname, '../../scripts/plugin-validator/check-known-bases.py');

/**
 * Door 1 of issue 32: a class family may derive from the library classes of
 * tables.json's known_bases, and in it the names each one holds are never the plugin's own. The
 * script recomputes those names (and that each identity class decorator returns its class) from
 * this CPython; a library that gained a private name fails here, not in production.
 */
describe('known library bases (tables.json)', () => {
  it('lists exactly the names CPython gives each base, and identity decorators return their class', () => {
    const result = spawnSync('python3', ['-I', '-B', SCRIPT], { encoding: 'utf8' });
    expect(result.stdout).toMatch(/ 0 differences under 3\.11\./);
    expect(result.status).toBe(0);
  });
});
