/**
 * Removes `<think>…</think>` blocks (qwen3-style reasoning) from streamed text, even when a tag is
 * split across chunks: a possible tag prefix at the end of a piece is held back until the next
 * piece decides it. Text inside an unterminated block at the end is reasoning and is dropped.
 *
 * @example
 *   const filter = new ThinkFilter()
 *   filter.push('Hi <thi') // 'Hi '
 *   filter.push('nk>plan</think>there') // 'there'
 */
const OPEN = '<think>';
const CLOSE = '</think>';

export class ThinkFilter {
  private inside = false;
  private held = '';
  /** Characters dropped as reasoning, so completion tokens can be estimated when usage is missing. */
  reasoningChars = 0;

  /** Feed the next piece of text; returns the part that is safe to show. */
  push(piece: string): string {
    let text = this.held + piece;
    this.held = '';
    // Fast path: no tag character anywhere and not inside a block.
    if (!this.inside && !text.includes('<')) return text;
    let visible = '';
    for (;;) {
      const tag = this.inside ? CLOSE : OPEN;
      const at = text.indexOf(tag);
      if (at === -1) {
        const keep = partialTagSuffix(text, tag);
        const usable = text.slice(0, text.length - keep);
        if (this.inside) this.reasoningChars += usable.length;
        else visible += usable;
        this.held = text.slice(text.length - keep);
        return visible;
      }
      if (this.inside) this.reasoningChars += at;
      else visible += text.slice(0, at);
      this.inside = !this.inside;
      text = text.slice(at + tag.length);
    }
  }

  /** The stream ended: release held text unless it belongs to reasoning. */
  end(): string {
    const rest = this.held;
    this.held = '';
    if (this.inside) {
      this.reasoningChars += rest.length;
      return '';
    }
    return rest;
  }
}

/** Length of the longest suffix of `text` that is a proper prefix of `tag`. */
function partialTagSuffix(text: string, tag: string): number {
  const max = Math.min(tag.length - 1, text.length);
  for (let n = max; n > 0; n--) {
    if (text.endsWith(tag.slice(0, n))) return n;
  }
  return 0;
}
