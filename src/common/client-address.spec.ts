import { clientAddress, clientKey } from './client-address';

describe('clientKey', () => {
  it('keys every spelling of one IPv6 address, and every address of its /64, as one network', () => {
    const spellings = [
      '2001:db8:1:2::1',
      '2001:DB8:1:2::1',
      '2001:0db8:0001:0002:0000:0000:0000:0001',
      '2001:db8:1:2:0:0:0:1',
      '2001:db8:1:2::0.0.0.1',
      '2001:db8:1:2:ffff:1234:abcd:9',
      'fe80::1%eth0'.replace('fe80::1', '2001:db8:1:2::77'),
    ];
    expect(new Set(spellings.map((address) => clientKey(address, 64)))).toEqual(
      new Set(['2001:db8:1:2::/64']),
    );
    expect(clientKey('2001:db8:1:3::1', 64)).toBe('2001:db8:1:3::/64');
  });

  it('cuts at the prefix given, inside a group too', () => {
    expect(clientKey('2001:db8:1:2::1', 48)).toBe('2001:db8:1::/48');
    expect(clientKey('2001:db8:1:2ff::1', 56)).toBe('2001:db8:1:200::/56');
    expect(clientKey('2001:db8:1:2::1', 128)).toBe('2001:db8:1:2::1/128');
  });

  it('keeps IPv4 as it is, IPv4-mapped IPv6 as its IPv4 address, and anything else as given', () => {
    expect(clientKey('203.0.113.7', 64)).toBe('203.0.113.7');
    expect(clientKey('::ffff:203.0.113.7', 64)).toBe('203.0.113.7');
    expect(clientKey('::FFFF:cb00:7107', 64)).toBe('203.0.113.7');
    expect(clientKey('not an address', 64)).toBe('not an address');
    expect(clientKey(undefined, 64)).toBe('unknown');
  });
});

describe('clientAddress', () => {
  it('writes the whole address in one form: IPv6 canonical, an IPv4-mapped one as IPv4', () => {
    expect(clientAddress('2001:0DB8:0:0::1')).toBe('2001:db8::1');
    expect(clientAddress('2001:db8:1:2:ffff:1234:abcd:9')).toBe('2001:db8:1:2:ffff:1234:abcd:9');
    expect(clientAddress('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(clientAddress('203.0.113.7')).toBe('203.0.113.7');
  });

  it('keeps anything else as given, at most 64 characters, and null for no address', () => {
    expect(clientAddress('not-an-address')).toBe('not-an-address');
    expect(clientAddress('x'.repeat(100))).toBe('x'.repeat(64));
    expect(clientAddress(undefined)).toBeNull();
    expect(clientAddress('')).toBeNull();
  });
});
