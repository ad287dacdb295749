import { hasPythonExtension, storedFileName } from './plugin-storage';

describe('storedFileName', () => {
  it.each([
    ['title_finder.py', 'title_finder'],
    ['../../etc/passwd.py', 'passwd'],
    ['..\\..\\win\\evil.py', 'evil'],
    ['my plugin (v2).py', 'my_plugin_v2'],
    ['.py', 'plugin'],
    ['ünïcödé.py', 'n_c_d'],
    ['___.py', 'plugin'],
    [`${'a'.repeat(100)}.py`, 'a'.repeat(64)],
  ])('%s -> %s_<suffix>.py', (clientName, stem) => {
    expect(storedFileName(clientName, '0123456789abcdef')).toBe(`${stem}_0123456789abcdef.py`);
  });

  it('adds a fresh random suffix each time', () => {
    const names = new Set(Array.from({ length: 20 }, () => storedFileName('x.py')));
    expect(names.size).toBe(20);
    for (const name of names) expect(name).toMatch(/^x_[0-9a-f]{16}\.py$/);
  });
});

describe('hasPythonExtension', () => {
  it.each([
    ['a.py', true],
    ['A.PY', true],
    ['dir/a.py', true],
    ['a.py.txt', false],
    ['a.pyc', false],
    ['py', false],
    ['a.', false],
    ['a.py/', false],
  ])('%s -> %s', (name, expected) => {
    expect(hasPythonExtension(name)).toBe(expected);
  });
});
