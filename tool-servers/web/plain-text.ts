const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'", '#x27': "'" };

/**
 * Provider snippets arrive as HTML fragments (`<strong>` around matches, `&amp;`). Models read
 * plain text better, so tags go and the common entities are decoded.
 *
 * @example
 *   htmlToPlainText('<strong>Koa</strong> &amp; friends') // 'Koa & friends'
 */
export function htmlToPlainText(fragment: string): string {
  return fragment
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+\d*);/gi, (whole, name: string) => {
      const lower = name.toLowerCase();
      if (lower in ENTITIES) return ENTITIES[lower];
      if (lower.startsWith('#x')) return String.fromCodePoint(Number.parseInt(lower.slice(2), 16));
      if (lower.startsWith('#')) return String.fromCodePoint(Number.parseInt(lower.slice(1), 10));
      return whole;
    })
    .replace(/\s+/g, ' ')
    .trim();
}
