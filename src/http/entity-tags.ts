/**
 * The entity-tags of an If-None-Match header, for the weak comparison it asks for (RFC 9110
 * 8.8.3.2, 13.1.2): `W/` dropped, `*` kept as it is.
 */
export function presentedTags(header: string | string[] | undefined): string[] {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  return [...text.matchAll(/\*|(?:W\/)?"[^"]*"/g)].map((match) => match[0].replace(/^W\//, ''));
}
