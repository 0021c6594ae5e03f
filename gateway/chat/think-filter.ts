/**
 * Removes `<think>…</think>` blocks (qwen3-style reasoning) from streamed text, even when a tag is
 * split across chunks: a possible tag prefix at the end of a piece is held back until the next
 * piece decides it. Text inside an unterminated block at the end is reasoning and is dropped.
 *
 * Templates that open the block in the prompt (DeepSeek-R1, QwQ) make the model write only the
 * closing tag. So a `</think>` met outside a block before any visible text is shown closes a block
 * that began with the call: what came before it is dropped. A filter made with `reasoningFirst`
 * (for a model known to do this) holds the start of the call back until it is decided — dropped at
 * the `</think>`, shown at an explicit `<think>` or at the end — since reasoning written before
 * its first chunk boundary would otherwise be shown already.
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
  /** Nothing but whitespace shown yet: a bare `</think>` still ends reasoning that began the call. */
  private opening = true;
  /** Characters dropped as reasoning, so completion tokens can be estimated when usage is missing. */
  reasoningChars = 0;
  /** A `</think>` closed a block this call never opened: the model's template opens it in the prompt. */
  sawBareClose = false;

  constructor(private readonly reasoningFirst = false) {}

  /** Characters held back, not yet shown or dropped. */
  get pendingChars(): number {
    return this.held.length;
  }

  /** Feed the next piece of text; returns the part that is safe to show. */
  push(piece: string): string {
    // Held text holds no whole tag: only its last characters can start one.
    let from = Math.max(0, this.held.length - (CLOSE.length - 1));
    let text = this.held + piece;
    this.held = '';
    // Fast path: no tag character anywhere and not inside a block.
    if (!this.inside && !this.opening && !text.includes('<')) return text;
    let visible = '';
    for (;;) {
      if (this.inside) {
        const at = text.indexOf(CLOSE);
        if (at === -1) {
          const keep = partialTagSuffix(text, CLOSE);
          this.reasoningChars += text.length - keep;
          this.held = text.slice(text.length - keep);
          return visible;
        }
        this.reasoningChars += at;
        this.inside = false;
        text = text.slice(at + CLOSE.length);
        continue;
      }
      const open = text.indexOf(OPEN, from);
      const close = text.indexOf(CLOSE, from);
      from = 0;
      if (close !== -1 && (open === -1 || close < open)) {
        // A block the call never opened: its template opened it in the prompt. Before anything was
        // shown, all of the call so far was reasoning; after, the shown part cannot be taken back.
        this.sawBareClose = true;
        if (this.opening) this.reasoningChars += close;
        else visible += text.slice(0, close);
        this.opening = false;
        text = text.slice(close + CLOSE.length);
        continue;
      }
      if (open !== -1) {
        visible += text.slice(0, open);
        this.opening = false;
        this.inside = true;
        text = text.slice(open + OPEN.length);
        continue;
      }
      if (this.opening && this.reasoningFirst) {
        this.held = text; // undecided: hold it all
        return visible;
      }
      const keep = Math.max(partialTagSuffix(text, OPEN), partialTagSuffix(text, CLOSE));
      visible += text.slice(0, text.length - keep);
      this.held = text.slice(text.length - keep);
      if (this.opening && /\S/.test(visible)) this.opening = false;
      return visible;
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
