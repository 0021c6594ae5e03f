/**
 * The `tools/call` requests running in this process, by (wallet, JSON-RPC id). Over stateless
 * Streamable HTTP a `notifications/cancelled` arrives as its own POST, handled by a fresh MCP
 * server that never saw the call: this map is how it finds the call to abort. Another instance of
 * a cluster cannot see it, so there cancellation is best effort (the call runs to its end).
 *
 * @example
 *   const call = running.start(wallet, 7)
 *   try { await tools.callTool(name, args, { signal: call.signal }) } finally { call.end() }
 *   running.cancel(wallet, 7, 'user pressed stop') // from another request: aborts it
 */
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';

export interface RunningCall {
  /** Aborted when a matching `notifications/cancelled` arrives, the request goes away or shutdown cuts work off. */
  readonly signal: AbortSignal;
  /** The call is over: forget it. */
  end(): void;
}

export class RunningCalls {
  /**
   * A set per key: two clients of one wallet number their requests independently (the SDK's start
   * at 0), so one key can name several calls at once.
   */
  private readonly calls = new Map<string, Set<AbortController>>();

  /**
   * @param shuttingDown aborts every running call when it fires: one listener for the process's
   *   life, where a per-call AbortSignal.any costs tens of microseconds on every call.
   */
  constructor(private readonly shuttingDown?: AbortSignal) {
    shuttingDown?.addEventListener('abort', () => this.abortAll(shuttingDown.reason), { once: true });
  }

  /** Number of calls being tracked (for tests and diagnostics). */
  get size(): number {
    let count = 0;
    for (const set of this.calls.values()) count += set.size;
    return count;
  }

  /**
   * Track a call; its signal is also aborted when `requestSignal` is (the HTTP request that
   * carries it went away) or shutdown cuts work off.
   */
  start(wallet: string, id: RequestId, requestSignal?: AbortSignal): RunningCall {
    const key = keyOf(wallet, id);
    const controller = new AbortController();
    // The request's signal lives no longer than the request: no listener to remove.
    requestSignal?.addEventListener('abort', () => controller.abort(requestSignal.reason), { once: true });
    // Already over (the client left before the call began, or shutdown has cut work off): born aborted.
    const over = requestSignal?.aborted ? requestSignal : this.shuttingDown?.aborted ? this.shuttingDown : undefined;
    if (over) controller.abort(over.reason);
    let set = this.calls.get(key);
    if (!set) this.calls.set(key, (set = new Set()));
    set.add(controller);
    return {
      signal: controller.signal,
      end: () => {
        set.delete(controller);
        if (set.size === 0 && this.calls.get(key) === set) this.calls.delete(key);
      },
    };
  }

  /**
   * Abort the wallet's running calls with this id; returns how many were aborted (0 when the call
   * already ended, never started here, or belongs to another wallet).
   */
  cancel(wallet: string, id: RequestId, reason?: string): number {
    const set = this.calls.get(keyOf(wallet, id));
    if (!set) return 0;
    for (const controller of set) controller.abort(new Error(reason ? `cancelled by the client: ${reason}` : 'cancelled by the client'));
    return set.size;
  }

  private abortAll(reason: unknown): void {
    for (const set of this.calls.values()) for (const controller of set) controller.abort(reason);
  }
}

/** JSON-RPC ids are strings or numbers, and 1 is not "1". */
function keyOf(wallet: string, id: RequestId): string {
  return `${wallet}\u0000${typeof id === 'number' ? 'n' : 's'}${id}`;
}
