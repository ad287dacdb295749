import { byteRange } from './byte-ranges';
import { presentedTags } from './entity-tags';

describe('byteRange', () => {
  it('reads the three forms of one range, clamped to the representation', () => {
    expect(byteRange('bytes=0-9', 100)).toEqual({ first: 0, last: 9 });
    expect(byteRange('bytes=90-', 100)).toEqual({ first: 90, last: 99 });
    expect(byteRange('bytes=-10', 100)).toEqual({ first: 90, last: 99 });
    expect(byteRange('bytes=50-500', 100)).toEqual({ first: 50, last: 99 });
    expect(byteRange('bytes=-500', 100)).toEqual({ first: 0, last: 99 });
    expect(byteRange('BYTES = 1 - 2', 100)).toEqual({ first: 1, last: 2 });
  });

  it('answers whole what it does not serve: no header, other units, malformed or several ranges', () => {
    for (const header of [
      undefined,
      'items=0-1',
      'bytes=',
      'bytes=-',
      'bytes=5-1',
      'bytes=0-1,5-6',
      'bytes=a-b',
    ]) {
      expect(byteRange(header, 100)).toBeNull();
    }
  });

  it('is unsatisfiable past the end or for an empty suffix', () => {
    expect(byteRange('bytes=100-', 100)).toBe('unsatisfiable');
    expect(byteRange('bytes=100-200', 100)).toBe('unsatisfiable');
    expect(byteRange('bytes=-0', 100)).toBe('unsatisfiable');
  });
});

describe('presentedTags', () => {
  it('reads each tag of a list, weak or strong, and the star', () => {
    expect(presentedTags('"a", W/"b",*')).toEqual(['"a"', '"b"', '*']);
    expect(presentedTags(['"a"', '"b"'])).toEqual(['"a"', '"b"']);
    expect(presentedTags(undefined)).toEqual([]);
  });
});
