import { parseListQuery } from './list-query';

describe('parseListQuery', () => {
  it('defaults to approved plugins, 50 at a time from the start', () => {
    expect(parseListQuery({})).toEqual({
      ok: true,
      query: {
        status: 'approved',
        group: undefined,
        type: undefined,
        q: undefined,
        sort: 'newest',
        limit: 50,
        offset: 0,
      },
    });
    expect(parseListQuery({ status: '', q: '   ', limit: '' })).toEqual(parseListQuery({}));
  });

  it('reads min_rating (0 to 5, one decimal) and sort', () => {
    expect(parseListQuery({ min_rating: '3.5', sort: 'rating' })).toMatchObject({
      ok: true,
      query: { minRating: 3.5, sort: 'rating' },
    });
    for (const bad of ['5.5', '-1', '3.25', 'x', '6']) {
      expect(parseListQuery({ min_rating: bad })).toEqual({
        ok: false,
        errors: { min_rating: 'must be a number from 0 to 5 with at most one decimal' },
      });
    }
    expect(parseListQuery({ sort: 'stars' })).toEqual({
      ok: false,
      errors: { sort: 'must be one of newest, rating, name' },
    });
  });

  it('caps the limit at 200', () => {
    expect(parseListQuery({ limit: '201' })).toMatchObject({ ok: true, query: { limit: 200 } });
    expect(parseListQuery({ limit: '9999999999' })).toMatchObject({ ok: true, query: { limit: 200 } });
  });

  it('reports every bad parameter', () => {
    expect(parseListQuery({ status: 'all', limit: '-1', offset: 'x', type: ['grep'] })).toEqual({
      ok: false,
      errors: {
        status: 'must be one of pending, approved, rejected',
        type: 'must be given once',
        limit: 'must be an integer of at least 1',
        offset: 'must be an integer of at least 0',
      },
    });
  });
});
