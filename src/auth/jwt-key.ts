import { createSecretKey } from 'node:crypto';

/**
 * The HMAC key as a KeyObject. Given a string, jsonwebtoken tries it as a PEM key on every
 * sign and verify and catches the failure: about half a millisecond of CPU each time. Given a
 * KeyObject it skips all that. (@nestjs/jwt passes it through; its types say
 * string | Buffer only, hence the casts where it is used.)
 */
export function jwtKey(secret: string): Buffer {
  return createSecretKey(Buffer.from(secret, 'utf8')) as unknown as Buffer;
}
