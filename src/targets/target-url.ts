import { domainToASCII } from 'node:url';

/** Longer URLs are refused; the column and every tool's command line have to hold them. */
export const TARGET_URL_MAX = 2048;

/** DNS limits on a host name (RFC 1035), checked on its ASCII (punycode) form. */
export const HOST_NAME_MAX = 253;
export const HOST_LABEL_MAX = 63;

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
 * plain text to anyone with the session), anything longer than TARGET_URL_MAX, and a host
 * name no DNS can hold (over HOST_NAME_MAX characters, or a label over HOST_LABEL_MAX).
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
  const hostName = stripBrackets(url.hostname);
  if (!fitsDns(hostName)) return null;
  url.hash = '';
  const targetUrl = url.href;
  if (targetUrl.length > TARGET_URL_MAX) return null;
  return {
    targetUrl,
    urlScheme: scheme,
    hostName,
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

function fitsDns(host: string): boolean {
  if (host.includes(':')) return true; // an IPv6 address, which the parser has checked
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  return name.length <= HOST_NAME_MAX && name.split('.').every((label) => label.length <= HOST_LABEL_MAX);
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
