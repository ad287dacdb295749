import { groupBySection, requestedChanges, valueProblem } from './configuration-rules';
import type { ConfigurationItemView } from './dto/configuration.dto';

const item = (section: string, key: string, dirty = false): ConfigurationItemView => ({
  dirty,
  key,
  descrip: `about ${key}`,
  section,
  value: `value of ${key}`,
});

describe('groupBySection', () => {
  const items = [
    item('tools', 'nmap_path', true),
    item('general', 'threads'),
    item('proxy', 'proxy_host'),
    item('general', 'log_level', true),
    item('Tools', 'zz'),
  ];
  const none = { keys: [], sections: [] };

  it('groups by section, sections and keys in code-point order', () => {
    const grouped = groupBySection(items, none);
    expect(Object.keys(grouped)).toEqual(['Tools', 'general', 'proxy', 'tools']);
    expect(grouped.general.map((entry) => entry.key)).toEqual(['log_level', 'threads']);
    expect(grouped.tools).toEqual([item('tools', 'nmap_path', true)]);
  });

  it('filters by key, by any of several sections, and by dirty, all together', () => {
    expect(Object.keys(groupBySection(items, { keys: ['threads'], sections: [] }))).toEqual(['general']);
    expect(Object.keys(groupBySection(items, { keys: [], sections: ['proxy', 'tools'] }))).toEqual([
      'proxy',
      'tools',
    ]);
    expect(groupBySection(items, { ...none, dirty: true })).toEqual({
      general: [item('general', 'log_level', true)],
      tools: [item('tools', 'nmap_path', true)],
    });
    expect(groupBySection(items, { keys: ['threads'], sections: ['proxy'] })).toEqual({});
    expect(groupBySection(items, { keys: ['threads'], sections: ['general'], dirty: false })).toEqual({
      general: [item('general', 'threads')],
    });
  });

  it('keeps a section called __proto__ as data', () => {
    const grouped = groupBySection([item('__proto__', 'x')], none);
    expect(Object.keys(grouped)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(grouped)).toBe(Object.prototype);
  });
});

describe('requestedChanges', () => {
  it('takes the first value of a repeated key and keeps the order given', () => {
    expect(requestedChanges({ b: ['1', '2'], a: '3' }, {})).toEqual({
      changes: [
        ['b', '1'],
        ['a', '3'],
      ],
      notText: [],
    });
  });

  it('adds query arguments the body does not have; the body wins', () => {
    expect(requestedChanges({ a: 'body' }, { a: 'query', b: 'q' }).changes).toEqual([
      ['a', 'body'],
      ['b', 'q'],
    ]);
    expect(requestedChanges(undefined, { a: ['x', 'y'] }).changes).toEqual([['a', 'x']]);
  });

  it('turns JSON numbers and booleans into text and reports what is not text', () => {
    expect(requestedChanges({ n: 5, t: true, o: { x: 1 }, z: null, e: [], s: '' }, {})).toEqual({
      changes: [
        ['n', '5'],
        ['t', 'true'],
        ['s', ''],
      ],
      notText: ['o', 'z', 'e'],
    });
  });

  it('finds nothing in an empty request or a JSON array body', () => {
    expect(requestedChanges({}, {})).toEqual({ changes: [], notText: [] });
    expect(requestedChanges(['a'], {})).toEqual({ changes: [], notText: [] });
  });
});

describe('valueProblem', () => {
  it('accepts text up to 1024 characters, tabs and non-ASCII included', () => {
    expect(valueProblem('')).toBeNull();
    expect(valueProblem('/usr/bin/nmap\t-sV')).toBeNull();
    expect(valueProblem('é'.repeat(1024))).toBeNull();
    expect(valueProblem('😀'.repeat(1024))).toBeNull();
  });

  it('refuses longer values and control characters', () => {
    expect(valueProblem('x'.repeat(1025))).toBe('must be at most 1024 characters');
    expect(valueProblem('/usr/bin/nmap\n--script evil')).toBe('must not contain control characters');
    expect(valueProblem('a\u0000b')).toBe('must not contain control characters');
    expect(valueProblem('a\u007fb')).toBe('must not contain control characters');
  });
});
