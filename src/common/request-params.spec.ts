import { parseFlag, parseId, readParam, readParamValues, requestArguments } from './request-params';

const request = (body: unknown, query: Record<string, unknown> = {}) => ({ body, query });

describe('readParamValues', () => {
  it('reads every value from the body, else from the query', () => {
    expect(readParamValues(request({ section: ['a', 'b'] }, { section: 'c' }), 'section')).toEqual([
      'a',
      'b',
    ]);
    expect(readParamValues(request({}, { section: ['c', 'd'] }), 'section')).toEqual(['c', 'd']);
    expect(readParamValues(request(undefined, { section: 'c' }), 'section')).toEqual(['c']);
    expect(readParamValues(request({ section: 7 }), 'section')).toEqual(['7']);
    expect(readParamValues(request({ section: { a: 1 } }, { section: 'q' }), 'section')).toEqual(['q']);
    expect(readParamValues(request({}, {}), 'section')).toEqual([]);
  });
});

describe('readParam', () => {
  it('gives the first value, body before query, never shortened', () => {
    const long = 'x'.repeat(5000);
    expect(readParam(request({ url: [long, 'b'] }, { url: 'q' }), 'url')).toBe(long);
    expect(readParam(request({}, { url: ['q1', 'q2'] }), 'url')).toBe('q1');
    expect(readParam(request({}, {}), 'url')).toBeUndefined();
  });
});

describe('parseFlag', () => {
  it.each([
    ['true', true],
    ['TRUE', true],
    ['1', true],
    ['false', false],
    ['False', false],
    ['0', false],
    [undefined, undefined],
    ['', undefined],
    ['yes', null],
    ['2', null],
    ['truee', null],
  ])('%p -> %p', (raw, expected) => {
    expect(parseFlag(raw)).toBe(expected);
  });
});

describe('parseId', () => {
  it.each([
    ['1', 1],
    ['42', 42],
    ['007', null],
    ['01', null],
    ['2147483647', 2147483647],
    ['2147483648', null],
    ['0', null],
    ['-1', null],
    ['+1', null],
    ['1.0', null],
    ['1e3', null],
    [' 1', null],
    ['0x10', null],
    ['abc', null],
    ['', null],
    ['99999999999', null],
    [undefined, null],
  ])('%p -> %p', (raw, expected) => {
    expect(parseId(raw)).toBe(expected);
  });
});

describe('requestArguments', () => {
  it('takes each name from the body when the body holds text under it, else from the query', () => {
    const merged = requestArguments(
      request({ a: 'body', b: { nested: 1 }, c: [42] }, { a: 'q', b: 'q', d: 'q' }),
    );
    expect({ ...merged }).toEqual({ a: ['body'], b: ['q'], c: [42], d: ['q'] });
  });

  it('gives an object without a prototype, so no argument name reaches one', () => {
    const merged = requestArguments(request(JSON.parse('{"__proto__": "x", "constructor": "y"}')));
    expect(Object.getPrototypeOf(merged)).toBeNull();
    expect(merged.constructor).toEqual(['y']);
  });
});
