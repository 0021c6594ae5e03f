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
      if (lower.startsWith('#'))
        return fromCodePoint(lower.startsWith('#x') ? Number.parseInt(lower.slice(2), 16) : Number.parseInt(lower.slice(1), 10), whole);
      return whole;
    })
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * A numeric entity's character. Past U+10FFFF String.fromCodePoint throws, and one bad entity
 * must not cost a provider its whole answer; lone surrogates are not characters either. Such an
 * entity stays as written.
 */
function fromCodePoint(codePoint: number, written: string): string {
  if (!(codePoint <= 0x10ffff) || (codePoint >= 0xd800 && codePoint <= 0xdfff)) return written;
  return String.fromCodePoint(codePoint);
}
