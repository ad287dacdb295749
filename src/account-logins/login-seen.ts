import type { FastifyRequest } from 'fastify';
import { clientAddress } from '../common/client-address';

/** The longest User-Agent a login keeps (the column's size); a longer one is cut. */
export const USER_AGENT_MAX_LENGTH = 255;

/** What a login records of its client, shown to its owner in the logins list. */
export interface LoginSeen {
  clientAddress: string | null;
  userAgent: string | null;
}

/**
 * The client's address as the trusted-proxy rules give it (request.ip: the right-most
 * X-Forwarded-For hop not in TRUSTED_PROXIES), and its User-Agent cut to
 * USER_AGENT_MAX_LENGTH characters (code points, so no surrogate pair is split).
 */
export function loginSeen(request: FastifyRequest): LoginSeen {
  const agent = request.headers['user-agent'];
  return {
    clientAddress: clientAddress(request.ip),
    userAgent: agent ? Array.from(agent).slice(0, USER_AGENT_MAX_LENGTH).join('') : null,
  };
}
