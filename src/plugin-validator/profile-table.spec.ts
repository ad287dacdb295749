import { spawnSync } from 'node:child_process';
import path from 'node:path';

const SCRIPT = path.resolve(__dirname, '../../scripts/validator/profile-table.py');

/**
 * The plugin profile's table (python/profile.json) against this CPython (issue 42): every module,
 * member and type it lists exists, every builtin is either vetted or forbidden, a callable a
 * plugin may take as a value has no restricted keyword, and `untyped` (the names allowed on a
 * value the checker cannot type) is exactly what the script computes from every type such a
 * value may have. A library that gained a member fails here, not in production.
 */
describe('plugin profile table (profile.json)', () => {
  it('matches what CPython gives every module, member and type, and its untyped names', () => {
    const result = spawnSync('python3', ['-I', '-B', SCRIPT], { encoding: 'utf8' });
    expect(result.stdout).toMatch(/ untyped names, 0 differences under 3\.11\.\n$/);
    expect(result.status).toBe(0);
  });
});
