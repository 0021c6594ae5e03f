/**
 * What an opener has opened so far, undone last-opened first, by its `close()` or by a failed
 * open: one list for both, so the two never undo different things or in another order.
 *
 * @example
 *   const opened = new UndoStack()
 *   const db = await openDatabase(url)
 *   opened.push(() => db.close())
 *   …
 *   await opened.undo()   // db.close() last, once however often it is called
 */
export class UndoStack {
  private readonly steps: Array<() => void | Promise<void>> = [];
  private undone: Promise<void> | undefined;

  push(step: () => void | Promise<void>): void {
    this.steps.push(step);
  }

  /** Run every step, the last pushed first; a step that throws stops the rest and rejects. */
  undo(): Promise<void> {
    this.undone ??= (async () => {
      for (const step of this.steps.reverse()) await step();
    })();
    return this.undone;
  }
}
