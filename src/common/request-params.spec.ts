import type { FastifyRequest as Request } from 'fastify';
import { parseFlag, parseId, readParam, readParamValues } from './request-params';

const request = (body: unknown, query: Record<string, unknown> = {}) =>
  ({ body, query }) as unknown as Request;

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
    ['007', 7],
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
