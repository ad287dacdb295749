import { createHash, randomBytes } from 'node:crypto';
import { generateSecret, generateURI, verify } from 'otplib';

/** RFC 6238 as authenticator apps use it: SHA-1, 6 digits, 30-second steps, base32 secret. */
export const TOTP_PERIOD_SECONDS = 30;
const DIGITS = 6;
/** A code of the step before or after the server's is accepted too: at most one step of clock drift. */
export const DRIFT_STEPS = 1;
const ISSUER = 'SVC';

export const RECOVERY_CODE_COUNT = 10;
const RECOVERY_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
/** 16 base32 characters: 80 random bits, shown as four groups of four. */
const RECOVERY_LENGTH = 16;

/** 160 random bits (otplib's default), base32. */
export function newTotpSecret(): string {
  return generateSecret();
}

export function otpauthUri(secret: string, account: string): string {
  return generateURI({
    issuer: ISSUER,
    label: account,
    secret,
    algorithm: 'sha1',
    digits: DIGITS,
    period: TOTP_PERIOD_SECONDS,
  });
}

/**
 * The time step `code` is valid for at `at` (the current step or one either side), or null;
 * otplib compares in constant time. Whether the step was used before is the caller's check.
 */
export async function totpStep(secret: string, code: string, at: Date): Promise<number | null> {
  if (!/^\d{6}$/.test(code)) return null;
  const result = await verify({
    secret,
    token: code,
    period: TOTP_PERIOD_SECONDS,
    digits: DIGITS,
    epoch: Math.floor(at.getTime() / 1000),
    epochTolerance: TOTP_PERIOD_SECONDS * DRIFT_STEPS,
  });
  // A TOTP result carries the step it matched (the HOTP one of the union does not).
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}

/** Ten new recovery codes as shown (`abcd-efgh-ijkl-mnop`). */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const bytes = randomBytes(RECOVERY_LENGTH);
    // 256 is a multiple of 32, so each character is uniform.
    const text = Array.from(bytes, (byte) => RECOVERY_ALPHABET[byte % 32]).join('');
    return text.match(/.{4}/g)!.join('-');
  });
}

/**
 * The stored form of a recovery code as typed (case, dashes and spaces aside); null for text
 * that cannot be one. 80 random bits need no slow hash: SHA-256 as for access tokens.
 */
export function recoveryCodeHash(text: string): string | null {
  const code = text.toLowerCase().replace(/[\s-]/g, '');
  if (code.length !== RECOVERY_LENGTH || [...code].some((char) => !RECOVERY_ALPHABET.includes(char))) {
    return null;
  }
  return createHash('sha256').update(code).digest('hex');
}
