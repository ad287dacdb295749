import { identityKey, storedEmail } from './identity-key';

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

describe('storedEmail', () => {
  it('trims and lower-cases, and keeps the Unicode form it was given', () => {
    expect(storedEmail('  Alice@Example.COM ')).toBe('alice@example.com');
    expect(storedEmail('E\u0301mile@example.com')).toBe('e\u0301mile@example.com');
  });

  it('names the same account as identityKey does for an ordinary address', () => {
    expect(identityKey(storedEmail(' Bob@Example.com'))).toBe(identityKey('bob@EXAMPLE.com'));
  });
});
