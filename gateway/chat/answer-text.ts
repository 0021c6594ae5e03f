/**
 * The chat's visible answer, built from every upstream call's visible text as it streams: a call's
 * leading whitespace (often left behind by a `</think>`) is dropped, and the calls that said
 * something are joined by a blank line. What is appended is passed on at once (to the SSE stream).
 *
 * @example
 *   const answer = new AnswerText((t) => sink.content(t))
 *   answer.newCall(); answer.push('\n\nLet me check.')
 *   answer.newCall(); answer.push(' It is noon.')
 *   answer.text // 'Let me check.\n\nIt is noon.'
 */
export class AnswerText {
  text = '';
  private callHasText = false;

  constructor(private readonly onAppend: (text: string) => void) {}

  /** The next upstream call starts. */
  newCall(): void {
    this.callHasText = false;
  }

  /** Visible text of the current call, in order. */
  readonly push = (piece: string): void => {
    if (!this.callHasText) {
      piece = piece.trimStart();
      if (piece === '') return;
      this.callHasText = true;
      if (this.text !== '') piece = `\n\n${piece}`;
    }
    this.text += piece;
    this.onAppend(piece);
  };
}
