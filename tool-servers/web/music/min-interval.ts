import { ToolError } from '../../kit/index.js';

export interface MinIntervalOptions {
  /**
   * Longest a caller may queue. A caller whose turn is further away is refused at once, so a
   * burst cannot book slots minutes ahead and the fallback chain moves on to the next provider.
   */
  maxWaitMs?: number;
}

/**
 * Space calls at least `intervalMs` apart within this process (MusicBrainz allows one request
 * per second per client and answers 503 above that). Callers queue for their turn, first come
 * first served; a caller that gives up (its signal aborts) leaves the queue, and everyone behind
 * it moves up. A turn further away than `maxWaitMs` is refused with ToolError
 * `upstream_unavailable` "rate limited (…)".
 *
 * @example
 *   const pace = createMinInterval(1000, { maxWaitMs: 6000 })
 *   await pace(signal) // resolves at once, the next call one second later
 */
export function createMinInterval(intervalMs: number, options: MinIntervalOptions = {}): (signal: AbortSignal) => Promise<void> {
  const maxWaitMs = options.maxWaitMs ?? Number.POSITIVE_INFINITY;
  let lastGrant = Number.NEGATIVE_INFINITY;
  const queue: Array<() => void> = [];
  let timer: NodeJS.Timeout | undefined;

  const grantNext = () => {
    timer = undefined;
    const next = queue.shift();
    if (!next) return;
    lastGrant = Date.now();
    next();
    if (queue.length > 0) timer = setTimeout(grantNext, intervalMs);
  };

  return (signal) => {
    if (signal.aborted) return Promise.reject(signal.reason);
    const now = Date.now();
    const untilFree = Math.max(0, lastGrant + intervalMs - now);
    const wait = untilFree + queue.length * intervalMs;
    if (wait === 0) {
      lastGrant = now;
      return Promise.resolve();
    }
    if (wait > maxWaitMs)
      return Promise.reject(new ToolError('upstream_unavailable', `rate limited (the next free slot is ${wait} ms away)`));
    return new Promise<void>((resolve, reject) => {
      const grant = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        queue.splice(queue.indexOf(grant), 1);
        if (queue.length === 0) {
          clearTimeout(timer);
          timer = undefined;
        }
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      queue.push(grant);
      timer ??= setTimeout(grantNext, untilFree);
    });
  };
}
