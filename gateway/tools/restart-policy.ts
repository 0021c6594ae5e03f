/**
 * When to restart a tool server that exited, as a pure function tested with a table of cases.
 * Quick crashes in a row back off exponentially up to a cap; after `crashLoopAfter` of them the
 * server is in `crash-loop` (shown in health) and is retried only every `crashLoopDelayMs`.
 */
export interface RestartPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
  /** A server that ran shorter than this before exiting crashed "quickly". */
  quickCrashMs: number;
  /** This many quick crashes in a row is a crash loop. */
  crashLoopAfter: number;
  /** Retry interval once in a crash loop. */
  crashLoopDelayMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  initialDelayMs: 500,
  maxDelayMs: 30_000,
  quickCrashMs: 10_000,
  crashLoopAfter: 5,
  crashLoopDelayMs: 60_000,
};

export interface RestartDecision {
  delayMs: number;
  /** Quick crashes in a row, counting this one. */
  quickCrashes: number;
  crashLoop: boolean;
}

/**
 * Decide the next restart after an exit.
 *
 * @example
 *   nextRestart({ quickCrashes: 0, uptimeMs: 200 }, DEFAULT_RESTART_POLICY)
 *   // { delayMs: 500, quickCrashes: 1, crashLoop: false }
 */
export function nextRestart(previous: { quickCrashes: number; uptimeMs: number }, policy: RestartPolicy): RestartDecision {
  // A server that ran a good while before exiting starts its count afresh.
  const quickCrashes = previous.uptimeMs < policy.quickCrashMs ? previous.quickCrashes + 1 : 1;
  if (quickCrashes >= policy.crashLoopAfter) {
    return { delayMs: policy.crashLoopDelayMs, quickCrashes, crashLoop: true };
  }
  const delayMs = Math.min(policy.initialDelayMs * 2 ** (quickCrashes - 1), policy.maxDelayMs);
  return { delayMs, quickCrashes, crashLoop: false };
}
