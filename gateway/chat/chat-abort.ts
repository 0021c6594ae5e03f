/**
 * One cancellation handle per chat request: the client leaving, the chat deadline or an upstream
 * call's timeout abort it, and everything the chat started stops. It hands undici an
 * emitter-shaped listener list (an AbortSignal's `addEventListener` costs several microseconds per
 * call on the hot path, a full EventEmitter about one) and creates the AbortSignal the tool host
 * needs only when a tool round asks for it.
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
}
