import { identityKey } from './identity-key';

/**
 * Providers that ignore dots in the local part (`a.lice@gmail.com` reaches `alice@gmail.com`),
 * each with the domain its mail lands at. Only providers documented to do so: elsewhere a dot
 * may name another person.
 */
const DOTLESS_PROVIDERS: ReadonlyMap<string, string> = new Map([
  ['gmail.com', 'gmail.com'],
  ['googlemail.com', 'gmail.com'],
]);

/**
 * The mailbox an address reaches, so that addresses one person receives at count as that
 * person (the own-plugin rules, the activation-mail bound): the address's identity key (case
 * and Unicode form folded), without a `+tag`, and for the providers above without dots and
 * under the provider's one domain. A quoted local part is left whole (its `+` and dots are
 * its own), and so is a domain in any other form (IDN or punycode: no conversion between them).
 * Not a validator: text that is no address maps to its identity key.
 */
export function mailboxOf(address: string): string {
  const key = identityKey(address);
  const at = key.lastIndexOf('@');
  if (at <= 0 || at === key.length - 1) return key;
  let local = key.slice(0, at);
  let domain = key.slice(at + 1);
  if (local.startsWith('"')) return key;
  const plus = local.indexOf('+');
  // `+tag@` alone is a mailbox of its own name, not an empty one.
  if (plus > 0) local = local.slice(0, plus);
  const provider = DOTLESS_PROVIDERS.get(domain);
  if (provider !== undefined) {
    domain = provider;
    const dotless = local.replace(/\./g, '');
    if (dotless !== '') local = dotless;
  }
  return `${local}@${domain}`;
}
