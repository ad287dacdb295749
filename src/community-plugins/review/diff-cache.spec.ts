import { DiffCache } from './diff-cache';

/** A computation the test finishes when it wants. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('DiffCache', () => {
  it('computes a key once for callers that ask at the same time, and keeps the value', async () => {
    const cache = new DiffCache<string>(100, (value) => value.length);
    const pending = deferred<string>();
    let computations = 0;
    const compute = () => {
      computations += 1;
      return pending.promise;
    };
    const answers = Promise.all([cache.get('k', compute), cache.get('k', compute), cache.get('k', compute)]);
    pending.resolve('value');
    expect(await answers).toEqual(['value', 'value', 'value']);
    expect(await cache.get('k', compute)).toBe('value');
    expect(computations).toBe(1);
  });

  it('keeps no failure: the next caller computes again', async () => {
    const cache = new DiffCache<string>(100, (value) => value.length);
    const failing = deferred<string>();
    const first = cache.get('k', () => failing.promise);
    failing.reject(new Error('busy'));
    await expect(first).rejects.toThrow('busy');
    expect(await cache.get('k', () => Promise.resolve('later'))).toBe('later');
  });

  it('drops the least recently used values past its size, and keeps none that must not be kept', async () => {
    const cache = new DiffCache<string>(
      10,
      (value) => value.length,
      (value) => value !== 'never',
    );
    let computations = 0;
    const value = (text: string) => () => {
      computations += 1;
      return Promise.resolve(text);
    };
    await cache.get('a', value('aaaa'));
    await cache.get('b', value('bbbb'));
    await cache.get('a', value('aaaa')); // a is now the most recently used
    await cache.get('c', value('cccc')); // 12 bytes: b goes
    expect(computations).toBe(3);
    await cache.get('a', value('aaaa'));
    await cache.get('c', value('cccc'));
    expect(computations).toBe(3);
    await cache.get('b', value('bbbb'));
    expect(computations).toBe(4);
    await cache.get('n', value('never'));
    await cache.get('n', value('never'));
    expect(computations).toBe(6);
    await cache.get('big', value('x'.repeat(11)));
    await cache.get('big', value('x'.repeat(11)));
    expect(computations).toBe(8);
  });
});
