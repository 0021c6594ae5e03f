/**
 * RPC URLs often carry a key: `https://user:pass@host/…`, `https://host/v2/<key>`,
 * `https://host/?apikey=…`. Anything that reaches an error message or a log goes through here.
 */

/**
 * Keep scheme, host and port; drop credentials, path and query.
 *
 * @example
 *   redactUrl('https://u:p@eth-mainnet.g.alchemy.com/v2/abc123?x=1') // 'https://eth-mainnet.g.alchemy.com/…'
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const hasMore = parsed.pathname.length > 1 || parsed.search.length > 0;
    return `${parsed.protocol}//${parsed.host}${hasMore ? '/…' : ''}`;
  } catch {
    return '[url]';
  }
}

/**
 * Replace every URL in `text` (the configured ones first, then anything URL-shaped) by its
 * redacted form, so a library's error text can be shown without leaking a key.
 *
 * @example
 *   redactUrlsIn('request to https://h/v2/KEY failed', ['https://h/v2/KEY']) // 'request to https://h/… failed'
 */
export function redactUrlsIn(text: string, knownUrls: readonly string[] = []): string {
  let out = text;
  for (const url of knownUrls) out = out.split(url).join(redactUrl(url));
  return out.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, (match) => (match.endsWith('/…') ? match : redactUrl(match)));
}
