/** The escape character of every LIKE pattern we build: `!` reads the same on SQLite and MySQL. */
export const LIKE_ESCAPE = '!';

/**
 * A LIKE pattern that matches `text` anywhere, its own `%`, `_` and `!` taken literally.
 * Use it with `LIKE :pattern ESCAPE '!'`: SQLite has no default escape character and
 * MySQL's default (a backslash) depends on its SQL mode, so the escape is always spelled out.
 */
export function containsPattern(text: string): string {
  return `%${text.replace(/[!%_]/g, (character) => `${LIKE_ESCAPE}${character}`)}%`;
}
