/**
 * A keyed async mutex: work for one key runs one at a time, in arrival order; different keys
 * run concurrently. This is what makes read-modify-write over Keyv safe inside one process.
 *
 * @example
 *   const mutex = new KeyedMutex()
 *   await mutex.run(wallet, async () => { const b = await read(); await write(b + 1) })
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous;
    try {
      return await work();
    } finally {
      done();
      // The last waiter cleans up, so idle keys cost no memory.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Keys with work queued or running (for tests and shutdown). */
  get size(): number {
    return this.tails.size;
  }
}
