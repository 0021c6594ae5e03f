/**
 * A store URL safe for logs and error messages: `postgres://user:secret@host/db` →
 * `postgres://user@host/db` (the same for `redis://`). A URL that cannot be parsed is not echoed.
 */
export function urlWithoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.toString();
  } catch {
    return '(an unparsable URL)';
  }
}
