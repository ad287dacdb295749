import { fieldAttributeChains } from './format-fields';

describe('fieldAttributeChains', () => {
  it.each([
    ['{0.gi_frame.f_globals}', [['gi_frame', 'f_globals']]],
    ['{host}:{port}', []],
    ['{0[key].__class__!r:>10}', [['__class__']]],
    ['{{0.__class__}}', []],
    ['{0.x:{1.__doc__}}', [['x'], ['__doc__']]],
    ['{0.gi_frame:>{1.f_back}}', [['gi_frame'], ['f_back']]],
    ['}}{0.a}{{', [['a']]],
    ['{0.a[b].c}', [['a', 'c']]],
  ])('%j reads %j', (template, chains) => {
    expect(fieldAttributeChains(template)).toEqual(chains);
  });
});
