import { listCode, pluginRuns, probedWindows, RUN_LENGTH, searchPlan } from './plugin-search-index';

const hex = (text: string) => Buffer.from(text, 'utf8').toString('hex');

describe('the catalogue search index', () => {
  it('stores every run of up to eight characters of each lower-cased field once, sorted, not across fields', () => {
    expect(pluginRuns(['AbcD', 'x']).map(({ run }) => run)).toEqual(
      ['abcd', 'bcd', 'cd', 'd', 'x'].map(hex).sort(),
    );
    expect(pluginRuns(['Scanner scans']).map(({ run }) => run)).toContain(hex('scanner '));
    expect(pluginRuns(['aaaaaaaaaa']).map(({ run }) => run)).toEqual(
      ['a', 'aa', 'aaa', 'aaaa', 'aaaaa', 'aaaaaa', 'aaaaaaa', 'aaaaaaaa'].map(hex),
    );
    // Characters, not UTF-16 units: an emoji is one character of four bytes.
    expect(pluginRuns(['É🚀']).map(({ run }) => run)).toEqual(['é🚀', '🚀'].map(hex).sort());
  });

  it('gives each run the hex digits it shares with the run before it', () => {
    expect(pluginRuns(['abab'])).toEqual([
      { run: hex('ab'), shared: 0 },
      { run: hex('abab'), shared: 4 },
      // 'a' is 61 and 'b' 62: one hex digit in common.
      { run: hex('b'), shared: 1 },
      { run: hex('bab'), shared: 2 },
    ]);
    expect(pluginRuns(['a', 'z'])).toEqual([
      { run: hex('a'), shared: 0 },
      { run: hex('z'), shared: 0 },
    ]);
  });

  it('counts each matching plugin once: exactly one of its runs in the range shares fewer digits than the query has', () => {
    const texts = ['banana bandana', 'an ant', 'nab', 'Ünïcödé ünï', 'ab ab ab', 'x'];
    const queries = ['a', 'an', 'ana', 'ban', 'band', 'bandana', ' ', 'nab', 'ü', 'ünï', 'ab a', 'zzz', 'b'];
    for (const q of queries) {
      const plan = searchPlan(q);
      if (plan.kind !== 'prefix') throw new Error(`${q} is not a prefix query`);
      const counted = texts.filter((text) =>
        pluginRuns([text]).some(
          ({ run, shared }) => run >= plan.from && run < plan.to && shared < plan.digits,
        ),
      );
      const runsCounted = texts
        .flatMap((text) => pluginRuns([text]))
        .filter(({ run, shared }) => run >= plan.from && run < plan.to && shared < plan.digits).length;
      const matching = texts.filter((text) => text.toLowerCase().includes(q.toLowerCase()));
      expect({ q, counted, runsCounted }).toEqual({ q, counted: matching, runsCounted: matching.length });
    }
  });

  it('answers a query of up to eight characters with one range of runs that start with it', () => {
    expect(searchPlan('WeB')).toEqual({ kind: 'prefix', from: hex('web'), to: `${hex('web')}g`, digits: 6 });
    expect(searchPlan('%')).toEqual({ kind: 'prefix', from: hex('%'), to: `${hex('%')}g`, digits: 2 });
    expect(searchPlan('ScannerX')).toMatchObject({ kind: 'prefix', from: hex('scannerx') });
  });

  it('narrows a longer query by its windows of eight characters and keeps its lower-cased text for the check', () => {
    expect(searchPlan('ABCDEFGHIJ')).toEqual({
      kind: 'windows',
      windows: ['abcdefgh', 'bcdefghi', 'cdefghij'].map(hex),
      text: 'abcdefghij',
    });
    expect(searchPlan('a'.repeat(RUN_LENGTH + 3))).toEqual({
      kind: 'windows',
      windows: [hex('a'.repeat(RUN_LENGTH))],
      text: 'a'.repeat(RUN_LENGTH + 3),
    });
  });

  it('probes at most eight windows, the first and the last among them', () => {
    const windows = Array.from({ length: 30 }, (_, index) => `w${index}`);
    const probed = probedWindows(windows);
    expect(probed).toHaveLength(8);
    expect(probed[0]).toBe('w0');
    expect(probed[probed.length - 1]).toBe('w29');
    expect(probedWindows(['a', 'b'])).toEqual(['a', 'b']);
  });

  it('codes the lists a plugin is in', () => {
    expect(listCode({ approved: false, listed: false })).toBe(0);
    expect(listCode({ approved: true, listed: false })).toBe(1);
    expect(listCode({ approved: true, listed: true })).toBe(2);
  });
});
