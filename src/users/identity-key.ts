/**
 * The key a username or an email is known by: Unicode NFKC with full case folding, so
 * `Émile`, `ÉMILE` and `émile` (composed or not) are one name, on every database alike,
 * while `émile` and `emile` stay two. JavaScript has no case-folding function: upper then
 * lower case is the usual stand-in for full folding (ß -> ss); lower case keeps a word's final
 * sigma, which folding maps to the ordinary one; and
 * NFKC is applied again because case mapping can leave text unnormalised.
 */
export function identityKey(text: string): string {
  return text.trim().normalize('NFKC').toUpperCase().toLowerCase().replace(/ς/g, 'σ').normalize('NFKC');
}

/** Key columns are varchar(255): a name or an email whose key is longer is refused. */
export const MAX_IDENTITY_KEY_LENGTH = 255;

/**
 * An email as it is stored and shown: trimmed and in lower case. Lookups never compare it:
 * they compare identityKey(email), which also folds Unicode forms.
 */
export function storedEmail(email: string): string {
  return email.trim().toLowerCase();
}
