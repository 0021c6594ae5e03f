/**
 * One cancellation handle per chat request: the client leaving or the chat deadline abort it, and
 * everything the chat started stops; an upstream attempt runs on a `branch` that its own timeout
 * aborts alone. It hands undici an emitter-shaped listener list (an AbortSignal's
 * `addEventListener` costs several microseconds per call on the hot path, a full EventEmitter about
 * one) and creates the AbortSignal the tool host needs only when a tool round asks for it.
 *
 * @example
 *   const abort = new ChatAbort()
 *   res.once('close', () => abort.abort(new ClientCancelled()))
 *   await toolRunner.callTool(name, args, { signal: abort.signal })
 */
/**
 * The part of an EventEmitter that undici (`signal` option) and our own waits use, for the one
 * `abort` event, which fires at most once: listeners are dropped as it fires.
 */
export class AbortEmitter {
  private listeners: Array<() => void> = [];

  on(_event: 'abort', listener: () => void): this {
    this.listeners.push(listener);
    return this;
  }

  once(event: 'abort', listener: () => void): this {
    return this.on(event, listener);
  }

  removeListener(_event: 'abort', listener: () => void): this {
    const at = this.listeners.lastIndexOf(listener);
    if (at !== -1) this.listeners.splice(at, 1);
    return this;
  }

  off(event: 'abort', listener: () => void): this {
    return this.removeListener(event, listener);
  }

  emit(_event: 'abort'): boolean {
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener();
    return listeners.length > 0;
  }
}

export class ChatAbort {
  /** What undici listens to: emits `abort` once. */
  readonly emitter = new AbortEmitter();
  private controller?: AbortController;
  private abortedWith?: { reason: unknown };

  get aborted(): boolean {
    return this.abortedWith !== undefined;
  }

  /** Why the chat was aborted (undefined while it runs). */
  get reason(): unknown {
    return this.abortedWith?.reason;
  }

  /** An AbortSignal for code that needs one (tool calls), created on first use. */
  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.abortedWith && !this.controller.signal.aborted) this.controller.abort(this.abortedWith.reason);
    return this.controller.signal;
  }

  /** Abort once; later calls keep the first reason. */
  abort(reason: unknown): void {
    if (this.abortedWith) return;
    this.abortedWith = { reason };
    this.controller?.abort(reason);
    this.emitter.emit('abort');
  }

  /**
   * A handle for one part of the chat (one upstream attempt): aborted with the chat and for the
   * same reason, or alone (its own timeout) while the chat goes on. `release` unlinks it once the
   * part is over.
   */
  branch(): { abort: ChatAbort; release(): void } {
    const part = new ChatAbort();
    if (this.abortedWith) {
      part.abort(this.abortedWith.reason);
      return { abort: part, release: () => {} };
    }
    const relay = () => part.abort(this.reason);
    this.emitter.on('abort', relay);
    return { abort: part, release: () => void this.emitter.removeListener('abort', relay) };
  }

  /** Resolves after `ms`; rejects with the reason as soon as this is aborted. */
  wait(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.abortedWith) return reject(this.abortedWith.reason);
      const onAbort = () => {
        clearTimeout(timer);
        reject(this.reason);
      };
      const timer = setTimeout(() => {
        this.emitter.off('abort', onAbort);
        resolve();
      }, ms);
      this.emitter.once('abort', onAbort);
    });
  }
}
