import { execFileSync } from 'node:child_process';
import { canonicalJson } from './canonical-json';

describe('canonicalJson', () => {
  it('sorts keys at every level and writes no spaces', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}',
    );
  });

  it("is byte for byte what Python's json.dumps(sort_keys=True, separators=(',', ':')) writes", () => {
    const value = { name: 'Détecteur 😀 <tag>', list: ['a\nb', '\u0001', '\u007f', 'é'], n: 12 };
    const python = execFileSync(
      'python3',
      [
        '-c',
        'import json,sys; sys.stdout.write(json.dumps(json.loads(sys.stdin.read()), sort_keys=True, separators=(",", ":")))',
      ],
      { input: JSON.stringify(value) },
    ).toString();
    expect(canonicalJson(value)).toBe(python);
  });
});
