import { configurationDefaults, parseDefaults } from './configuration-defaults';

describe('configuration defaults', () => {
  const items = configurationDefaults();

  it('ships a few dozen items in the general, proxy, tools and wordlists sections', () => {
    expect(items.length).toBeGreaterThanOrEqual(30);
    expect([...new Set(items.map((item) => item.section))]).toEqual([
      'general',
      'proxy',
      'tools',
      'wordlists',
    ]);
  });

  it('has unique keys', () => {
    expect(new Set(items.map((item) => item.key)).size).toBe(items.length);
  });

  it('names the paths of the external tools the framework drives', () => {
    const tools = [
      'nmap',
      'sqlmap',
      'nikto',
      'wapiti',
      'amass',
      'subfinder',
      'ffuf',
      'nuclei',
      'whatweb',
      'testssl',
    ];
    for (const tool of tools) {
      const item = items.find((candidate) => candidate.key === `${tool}_path`);
      expect([tool, item?.section, item?.value]).toEqual([
        tool,
        'tools',
        expect.stringMatching(/^\/usr\/bin\//),
      ]);
    }
  });

  it('describes every item', () => {
    expect(items.filter((item) => item.descrip.trim() === '').map((item) => item.key)).toEqual([]);
  });

  const file = (sections: unknown) => ({ sections });
  const item = (key: unknown, value: unknown = 'v', descrip: unknown = 'd') => ({ key, value, descrip });

  it.each([
    ['no sections', {}, '"sections" must be a non-empty list'],
    ['an empty section list', file([]), '"sections" must be a non-empty list'],
    ['a section without items', file([{ name: 'general', items: [] }]), 'section general has no items'],
    ['a bad section name', file([{ name: 'General!', items: [item('a')] }]), 'bad section name "General!"'],
    [
      'a repeated section',
      file([
        { name: 'a', items: [item('x')] },
        { name: 'a', items: [item('y')] },
      ]),
      'section a appears twice',
    ],
    [
      'a key in two sections',
      file([
        { name: 'a', items: [item('x')] },
        { name: 'b', items: [item('x')] },
      ]),
      'key x appears twice',
    ],
    ['a bad key', file([{ name: 'a', items: [item('X-Y')] }]), 'bad key "X-Y" in section a'],
    ['a key over 100 characters', file([{ name: 'a', items: [item('k'.repeat(101))] }]), 'bad key'],
    ['a value that is not text', file([{ name: 'a', items: [item('x', 5)] }]), 'bad value of x'],
    [
      'a value over 1024 characters',
      file([{ name: 'a', items: [item('x', 'v'.repeat(1025))] }]),
      'bad value of x',
    ],
    ['a missing descrip', file([{ name: 'a', items: [{ key: 'x', value: 'v' }] }]), 'bad descrip of x'],
  ])('refuses %s', (_, input, message) => {
    expect(() => parseDefaults(input)).toThrow(message);
  });

  it('flattens sections into items in file order', () => {
    expect(
      parseDefaults(
        file([
          { name: 'b', items: [item('y', '1', 'why')] },
          { name: 'a', items: [item('x', '', 'ex')] },
        ]),
      ),
    ).toEqual([
      { key: 'y', value: '1', section: 'b', descrip: 'why' },
      { key: 'x', value: '', section: 'a', descrip: 'ex' },
    ]);
  });
});
