import type { AppConfig } from '../config/app-config';

/** The path of the page that confirms an email (src/pages), as the activation mail links it. */
export const EMAIL_VERIFY_PATH = '/email-verify';
/** The page where the owner of an address that someone else may have registered secures it. */
export const EMAIL_CLAIM_PATH = '/email-claim';

/**
 * The link of an activation mail, as the spec shapes it: `http://<SERVER_ADDR>:<FRONTEND_PORT>/email-verify/<key>`,
 * or under FRONTEND_URL when one is set. FRONTEND_PORT defaults to the API's own port, whose
 * page answers the link; with PORT=0 that is the port the server was given (`listeningPort`).
 */
export function activationLink(
  config: Pick<AppConfig, 'serverAddr' | 'frontendPort' | 'frontendUrl' | 'port'>,
  key: string,
  listeningPort: () => number | undefined,
): string {
  return serviceLink(config, `${EMAIL_VERIFY_PATH}/${encodeURIComponent(key)}`, listeningPort);
}

/** A page of the service (`path` starts with a slash) at the address the activation link uses. */
export function serviceLink(
  config: Pick<AppConfig, 'serverAddr' | 'frontendPort' | 'frontendUrl' | 'port'>,
  path: string,
  listeningPort: () => number | undefined,
): string {
  if (config.frontendUrl !== null) return `${config.frontendUrl}${path}`;
  const port = config.frontendPort !== 0 ? config.frontendPort : (listeningPort() ?? config.port);
  return `http://${config.serverAddr}:${port}${path}`;
}
