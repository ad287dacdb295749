import { identityKey } from './identity-key';

describe('identityKey', () => {
  it.each([
    ['Alice', 'alice'],
    ['  ALICE@Example.COM ', 'alice@example.com'],
    ['Émile', 'émile'],
    ['E\u0301mile', 'émile'],
    ['ÉMILE', 'émile'],
    ['Straße', 'strasse'],
    ['ΣΊΣΥΦΟΣ', 'σίσυφοσ'],
    ['σίσυφος', 'σίσυφοσ'],
    ['ａｌｉｃｅ', 'alice'],
    ['ﬁle', 'file'],
  ])('%j has the key %j', (text, key) => {
    expect(identityKey(text)).toBe(key);
  });

  it('keeps accents apart from their bare letters', () => {
    expect(identityKey('émile')).not.toBe(identityKey('emile'));
    expect(identityKey('álice@example.com')).not.toBe(identityKey('alice@example.com'));
  });
});
