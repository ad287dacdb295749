import { pluginGrams, probedGrams, searchPlan } from './plugin-search-index';

const hex = (text: string) => Buffer.from(text, 'utf8').toString('hex');

describe('the catalogue search index', () => {
  it('stores every run of up to three characters of each lower-cased field, not across fields', () => {
    expect(pluginGrams(['AbcD', 'x']).sort()).toEqual(['abc', 'bcd', 'cd', 'd', 'x'].map(hex).sort());
    expect(pluginGrams(['aaaa'])).toEqual(['aaa', 'aa', 'a'].map(hex));
    // Characters, not UTF-16 units: an emoji is one character of four bytes.
    expect(pluginGrams(['É🚀'])).toEqual(['é🚀', '🚀'].map(hex));
  });

  it('answers a query of up to three characters with one range of grams that start with it', () => {
    expect(searchPlan('WeB')).toEqual({ kind: 'range', from: hex('web'), to: `${hex('web')}g` });
    expect(searchPlan('%')).toEqual({ kind: 'range', from: hex('%'), to: `${hex('%')}g` });
  });

  it('narrows a longer query by its trigrams and keeps its lower-cased text for the check', () => {
    expect(searchPlan('ABCDA')).toEqual({
      kind: 'grams',
      grams: ['abc', 'bcd', 'cda'].map(hex),
      text: 'abcda',
    });
    expect(searchPlan('aaaaaa')).toEqual({ kind: 'grams', grams: [hex('aaa')], text: 'aaaaaa' });
  });

  it('probes at most eight trigrams, the first and the last among them', () => {
    const grams = Array.from({ length: 30 }, (_, index) => `g${index}`);
    const probed = probedGrams(grams);
    expect(probed).toHaveLength(8);
    expect(probed[0]).toBe('g0');
    expect(probed[probed.length - 1]).toBe('g29');
    expect(probedGrams(['a', 'b'])).toEqual(['a', 'b']);
  });
});
