import { parseAction, parseSessionName } from './session-rules';

describe('parseSessionName', () => {
  it('keeps names of 1 to 50 characters, trimmed', () => {
    expect(parseSessionName('a')).toBe('a');
    expect(parseSessionName('  web audit  ')).toBe('web audit');
    expect(parseSessionName('x'.repeat(50))).toBe('x'.repeat(50));
    expect(parseSessionName('😀'.repeat(50))).toBe('😀'.repeat(50));
  });

  it('refuses missing, blank, longer and control-character names', () => {
    expect(parseSessionName(undefined)).toBeNull();
    expect(parseSessionName('')).toBeNull();
    expect(parseSessionName('   ')).toBeNull();
    expect(parseSessionName('x'.repeat(51))).toBeNull();
    expect(parseSessionName('a\nb')).toBeNull();
    expect(parseSessionName('a\u0000b')).toBeNull();
  });
});

describe('parseAction', () => {
  it('knows add, remove and activate, exactly', () => {
    expect(['add', 'remove', 'activate'].map(parseAction)).toEqual(['add', 'remove', 'activate']);
    expect(['Add', 'ACTIVATE', 'delete', '', undefined].map(parseAction)).toEqual([
      null,
      null,
      null,
      null,
      null,
    ]);
  });
});
