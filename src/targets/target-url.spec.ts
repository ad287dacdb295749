import { normalizeHostName, parseTargetUrl, TARGET_URL_MAX } from './target-url';

describe('parseTargetUrl', () => {
  it.each([
    [
      'http://example.com',
      {
        targetUrl: 'http://example.com/',
        urlScheme: 'http',
        hostName: 'example.com',
        portNumber: 80,
        hostPath: '/',
      },
    ],
    [
      'https://Example.COM/Login?next=/a&b=1#frag',
      {
        targetUrl: 'https://example.com/Login?next=/a&b=1',
        urlScheme: 'https',
        hostName: 'example.com',
        portNumber: 443,
        hostPath: '/Login?next=/a&b=1',
      },
    ],
    [
      'http://[::1]:8080/x',
      {
        targetUrl: 'http://[::1]:8080/x',
        urlScheme: 'http',
        hostName: '::1',
        portNumber: 8080,
        hostPath: '/x',
      },
    ],
    [
      'https://[2001:DB8:0:0::1]/',
      {
        targetUrl: 'https://[2001:db8::1]/',
        urlScheme: 'https',
        hostName: '2001:db8::1',
        portNumber: 443,
        hostPath: '/',
      },
    ],
    [
      'HTTP://10.0.0.5:80/a b',
      {
        targetUrl: 'http://10.0.0.5/a%20b',
        urlScheme: 'http',
        hostName: '10.0.0.5',
        portNumber: 80,
        hostPath: '/a%20b',
      },
    ],
    [
      'https://bücher.example:8443',
      {
        targetUrl: 'https://xn--bcher-kva.example:8443/',
        urlScheme: 'https',
        hostName: 'xn--bcher-kva.example',
        portNumber: 8443,
        hostPath: '/',
      },
    ],
    [
      '  http://intranet:443/  ',
      {
        targetUrl: 'http://intranet:443/',
        urlScheme: 'http',
        hostName: 'intranet',
        portNumber: 443,
        hostPath: '/',
      },
    ],
  ])('%s', (raw, expected) => {
    expect(parseTargetUrl(raw)).toEqual(expected);
  });

  it.each([
    undefined,
    '',
    'example.com',
    '/relative/path',
    '//example.com/',
    'ftp://example.com/',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'http:example.com',
    'http:/example.com',
    'http:\\\\example.com',
    'http://',
    'http://exa mple.com/',
    'http://[::1/',
    'http://example.com:99999/',
    'http://user:secret@example.com/',
    'http://user@example.com/',
    'http://exa\nmple.com/',
    'http://example.com/\tx',
  ])('refuses %p', (raw) => {
    expect(parseTargetUrl(raw)).toBeNull();
  });

  it(`refuses URLs longer than ${TARGET_URL_MAX} characters, before or after normalisation`, () => {
    const prefix = 'http://example.com/';
    expect(parseTargetUrl(prefix + 'a'.repeat(TARGET_URL_MAX - prefix.length))?.targetUrl.length).toBe(
      TARGET_URL_MAX,
    );
    expect(parseTargetUrl(prefix + 'a'.repeat(TARGET_URL_MAX - prefix.length + 1))).toBeNull();
    // Each space becomes %20: short enough as given, too long once normalised.
    expect(parseTargetUrl(prefix + ' '.repeat(1000) + 'x')).toBeNull();
  });
});

describe('normalizeHostName', () => {
  it('gives a host the form parseTargetUrl stores', () => {
    expect(normalizeHostName('Example.COM')).toBe('example.com');
    expect(normalizeHostName('[::1]')).toBe('::1');
    expect(normalizeHostName('2001:DB8:0:0::1')).toBe('2001:db8::1');
    expect(normalizeHostName('bücher.example')).toBe('xn--bcher-kva.example');
  });
});
