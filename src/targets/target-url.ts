import { domainToASCII } from 'node:url';

/** Longer URLs are refused; the column and every tool's command line have to hold them. */
export const TARGET_URL_MAX = 2048;

const DEFAULT_PORTS: Record<string, number> = { http: 80, https: 443 };

/** What a target URL is made of, in the shape of the `targets` columns. */
export interface ParsedTargetUrl {
  /** The URL in WHATWG normal form, without its fragment. */
  targetUrl: string;
  urlScheme: 'http' | 'https';
  /** Lower-case host; an IPv6 address without its brackets, IDN host names in punycode. */
  hostName: string;
  /** The explicit port, else 80 for http and 443 for https. */
  portNumber: number;
  /** Path plus query: what a scanner requests on the host. */
  hostPath: string;
}

/**
 * Parses a target URL with the WHATWG URL parser, or returns null when it is not an
 * absolute http(s) URL with a host. Refused as well: control characters (the parser would
 * silently drop tabs and line breaks), credentials in the URL (they would be listed in
 * plain text to anyone with the session), and anything longer than TARGET_URL_MAX.
 */
export function parseTargetUrl(raw: string | undefined): ParsedTargetUrl | null {
  if (raw === undefined) return null;
  const input = raw.trim();
  // eslint-disable-next-line no-control-regex
  if (input.length > TARGET_URL_MAX || /[\u0000-\u001f\u007f]/.test(input)) return null;
  // The parser is lenient with `http:host` and `http:\\host`; a target is written out in full.
  if (!/^https?:\/\//i.test(input)) return null;
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return null;
  }
  const scheme = url.protocol.slice(0, -1);
  if ((scheme !== 'http' && scheme !== 'https') || url.hostname === '') return null;
  if (url.username !== '' || url.password !== '') return null;
  url.hash = '';
  const targetUrl = url.href;
  if (targetUrl.length > TARGET_URL_MAX) return null;
  return {
    targetUrl,
    urlScheme: scheme,
    hostName: stripBrackets(url.hostname),
    portNumber: url.port === '' ? DEFAULT_PORTS[scheme] : Number(url.port),
    hostPath: url.pathname + url.search,
  };
}

/** A host name as a filter gives it, in the form parseTargetUrl stores. */
export function normalizeHostName(raw: string): string {
  const host = stripBrackets(raw.trim());
  if (host.includes(':')) {
    try {
      return stripBrackets(new URL(`http://[${host}]/`).hostname);
    } catch {
      return host.toLowerCase();
    }
  }
  return domainToASCII(host) || host.toLowerCase();
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
