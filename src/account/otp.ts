import { generate, generateSecret, verify } from 'otplib';

/** RFC 6238 TOTP: SHA-1, 6 digits, 300-second steps, base32 secret. */
const PERIOD_SECONDS = 300;
const DIGITS = 6;

export function newOtpSecret(): string {
  return generateSecret();
}

export function otpFor(secret: string, at: Date): Promise<string> {
  return generate({ secret, period: PERIOD_SECONDS, digits: DIGITS, epoch: Math.floor(at.getTime() / 1000) });
}

/** Only the current step counts, as the spec's 300-second interval says; comparison is constant-time. */
export async function isValidOtp(secret: string, token: string, at: Date): Promise<boolean> {
  if (!/^\d{6}$/.test(token)) return false;
  const result = await verify({
    secret,
    token,
    period: PERIOD_SECONDS,
    digits: DIGITS,
    epoch: Math.floor(at.getTime() / 1000),
  });
  return result.valid;
}
