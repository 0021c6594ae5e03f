/**
 * Group commit without a timer: a commit starts as soon as one is asked for and none is running;
 * requests that arrive while one runs are served together by the next, which starts the moment
 * the running one ends. Under load every commit carries everything that queued during the last.
 *
 * `flush` gathers what to write when it starts (synchronously, before its first await), so every
 * change made before `request()` was called is in the commit that request waits for. A commit
 * starts in the check phase of the event-loop turn that asked for it, so one turn's changes share it.
 *
 * @example
 *   const commits = new GroupCommit(() => writeDirtyRows())
 *   dirty.add(row); await commits.request()   // resolved once a commit holding `row` has landed
 */
interface Waiting {
  promise: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
}

export class GroupCommit {
  private running: Promise<void> | undefined;
  private next: Waiting | undefined;

  constructor(private readonly flush: () => Promise<void>) {}

  /** Resolves once a commit that started after this call has finished; rejects if it failed. */
  request(): Promise<void> {
    if (this.next) return this.next.promise;
    let resolve!: () => void;
    let reject!: (err: unknown) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    this.next = { promise, resolve, reject };
    if (!this.running) this.start();
    return promise;
  }

  /** Wait for every commit asked for so far (shutdown). */
  async drain(): Promise<void> {
    while (this.running) await this.running.catch(() => {});
  }

  private start(): void {
    const batch = this.next!;
    this.next = undefined;
    // The commit runs in this turn's check phase (setImmediate, not a timer): every change made
    // while this turn handled its I/O — the settles of all the responses that arrived together —
    // joins it. The SQLite driver is synchronous, so without this each request would commit alone.
    this.running = new Promise<void>((resolve) => setImmediate(resolve))
      .then(this.flush)
      .then(batch.resolve, batch.reject)
      .finally(() => {
        this.running = undefined;
        if (this.next) this.start();
      });
  }
}
