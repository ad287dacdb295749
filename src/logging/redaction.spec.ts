import { acceptableRequestId, redactUrl } from './redaction';

describe('redactUrl', () => {
  it.each([
    [
      '/api/v1/login/?emailOrUsername=bob&password=S3cret!',
      '/api/v1/login/?emailOrUsername=bob&password=[Redacted]',
    ],
    [
      '/api/v1/new-password?otp=123456&password=x&confirm_password=y',
      '/api/v1/new-password?otp=[Redacted]&password=[Redacted]&confirm_password=[Redacted]',
    ],
    [
      '/api/v1/verify/confirm_email/0f1e2d3c-aaaa-bbbb-cccc-000000000000',
      '/api/v1/verify/confirm_email/[Redacted]',
    ],
    ['/api/v1/sessions/?active=true', '/api/v1/sessions/?active=true'],
    ['/x?PASSWORD=a#frag', '/x?PASSWORD=[Redacted]#frag'],
  ])('%s', (url, expected) => expect(redactUrl(url)).toBe(expected));
});

describe('acceptableRequestId', () => {
  it.each(['abc-123', 'f47ac10b-58cc-4372-a567-0e02b2c3d479', 'req.1:2'])('keeps %s', (id) =>
    expect(acceptableRequestId(id)).toBe(true),
  );
  it.each(['', 'a b', 'x\ny', 'x'.repeat(129), 42, undefined])('refuses %j', (id) =>
    expect(acceptableRequestId(id)).toBe(false),
  );
});
