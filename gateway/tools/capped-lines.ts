/**
 * Splits a child's stderr into lines with a bound on memory: a child that writes without ever
 * sending a newline must not make the gateway buffer it all. A line longer than the cap is passed
 * on cut, once, and the rest of it up to the next newline is dropped.
 */

/** Appended to a line that was cut at the cap. */
export const TRUNCATED_MARK = ' …[truncated]';

export class CappedLineSplitter {
  private partial = '';
  /** Inside a line that was already passed on cut: drop text until its newline. */
  private dropping = false;
  private readonly maxChars: number;
  private readonly onLine: (line: string) => void;

  /**
   * @example
   *   const lines = new CappedLineSplitter(8192, (line) => log(line))
   *   child.stderr.on('data', (text) => lines.push(text))
   */
  constructor(maxChars: number, onLine: (line: string) => void) {
    this.maxChars = maxChars;
    this.onLine = onLine;
  }

  push(text: string): void {
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      if (this.dropping) {
        this.dropping = false;
        continue;
      }
      this.emit(line);
    }
    if (this.partial.length > this.maxChars) {
      if (!this.dropping) this.emit(this.partial);
      this.dropping = true;
      this.partial = '';
    }
  }

  private emit(line: string): void {
    if (!line.trim()) return;
    this.onLine(line.length > this.maxChars ? line.slice(0, this.maxChars) + TRUNCATED_MARK : line);
  }
}
