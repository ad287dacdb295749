import { createSecretKey, type KeyObject } from 'node:crypto';

/**
 * The HMAC key as a KeyObject. Given a string, jsonwebtoken tries it as a PEM key on every
 * sign and verify and catches the failure: about half a millisecond of CPU each time. Given a
 * KeyObject it skips all that.
 */
export function jwtKey(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret, 'utf8'));
}
