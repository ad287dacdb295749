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
    ['/email-verify/0f1e2d3c-aaaa-bbbb-cccc-000000000000', '/email-verify/[Redacted]'],
    [
      '/api/v1/verify/claim_email/0f1e2d3c-aaaa-bbbb-cccc-000000000000',
      '/api/v1/verify/claim_email/[Redacted]',
    ],
    ['/email-claim/0f1e2d3c-aaaa-bbbb-cccc-000000000000', '/email-claim/[Redacted]'],
    ['/api/v1/verify/claim%5Femail/0f1e2d3c', '/api/v1/verify/claim_email/[Redacted]'],
    ['/email%2Dclaim/0f1e2d3c?x=1', '/email-claim/[Redacted]?x=1'],
    ['/Email-Verify/0f1e2d3c-aaaa/extra?x=1', '/Email-Verify/[Redacted]?x=1'],
    ['/api/v1/sessions/?active=true', '/api/v1/sessions/?active=true'],
    ['/x?PASSWORD=a#frag', '/x?PASSWORD=[Redacted]#frag'],
    [
      '/api/v1/sessions/?access_token=eyJ.a.b&jwt=eyJ.c.d&id_token=t&refresh-token=r',
      '/api/v1/sessions/?access_token=[Redacted]&jwt=[Redacted]&id_token=[Redacted]&refresh-token=[Redacted]',
    ],
    [
      '/api/v1/x?apiKey=k1&api_key=k2&session_id=s&code=c&Authorization=Bearer%20x&name=ok',
      '/api/v1/x?apiKey=[Redacted]&api_key=[Redacted]&session_id=[Redacted]&code=[Redacted]&Authorization=[Redacted]&name=ok',
    ],
    ['/x?%74oken=abc', '/x?%74oken=[Redacted]'],
    ['/x?token', '/x?token'],
    ['/x?a=1&&jwt=2', '/x?a=1&&jwt=[Redacted]'],
    // The router decodes the path: so does the redaction.
    ['/api/v1/verify/confirm%5Femail/0f1e2d3c', '/api/v1/verify/confirm_email/[Redacted]'],
    ['/email%2Dverify/0f1e2d3c?x=1', '/email-verify/[Redacted]?x=1'],
    ['/api/v1/verify%2Fconfirm_email%2F0f1e2d3c', '/api/v1/verify/confirm_email/[Redacted]'],
    ['/%65mail-verify/0f1e%3F2d3c', '/email-verify/[Redacted]'],
    ['/email%252Dverify/0f1e2d3c', '/email-verify/[Redacted]'],
    ['//api/v1//verify/confirm_email/0f1e2d3c', '/api/v1/verify/confirm_email/[Redacted]'],
    ['/email-verify%2F0f1e2d3c', '/email-verify/[Redacted]'],
    ['/api/v1/sessions/%41?x=1', '/api/v1/sessions/%41?x=1'],
    ['/bad%E0%A4%A/email-verify/x', '/bad%E0%A4%A/email-verify/[Redacted]'],
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
