import { containsPattern } from './like';

describe('containsPattern', () => {
  it('wraps the text in wildcards', () => {
    expect(containsPattern('example.com')).toBe('%example.com%');
  });

  it('escapes the wildcards and the escape character itself with !', () => {
    expect(containsPattern('100%_done!')).toBe('%100!%!_done!!%');
  });

  it('leaves a backslash alone: it is no escape character under ESCAPE !', () => {
    expect(containsPattern('a\\b')).toBe('%a\\b%');
  });

  it('makes an empty text match everything', () => {
    expect(containsPattern('')).toBe('%%');
  });
});
