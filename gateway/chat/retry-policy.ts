/**
 * When an upstream call is worth repeating. A pure function so the rule is tested with a table.
 * Only failures that happen before any response body was consumed reach it, so a retry never
 * duplicates streamed output.
 */

/** Network error codes that mean "the request never got a real answer". */
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CLOSED',
]);

export interface RetryCase {
  /** Attempts made so far, counting the one that just failed (1 after the first try). */
  attempt: number;
  maxAttempts: number;
  /** HTTP status of the failed attempt, when one arrived. */
  status?: number;
  /** Error code of a connection failure, when no status arrived. */
  errorCode?: string;
}

/**
 * @example
 *   shouldRetry({ attempt: 1, maxAttempts: 3, status: 503 }) // true
 *   shouldRetry({ attempt: 1, maxAttempts: 3, status: 400 }) // false
 */
export function shouldRetry(c: RetryCase): boolean {
  if (c.attempt >= c.maxAttempts) return false;
  if (c.status !== undefined) return c.status === 429 || (c.status >= 500 && c.status !== 501);
  return c.errorCode !== undefined && TRANSIENT_CODES.has(c.errorCode);
}

/**
 * Delay before the next attempt: exponential from `baseMs`, or the upstream's Retry-After when it
 * asked for one, never more than `capMs` (a chat has a deadline to keep).
 *
 * @example
 *   retryDelayMs(1, { baseMs: 100, capMs: 2000 }) // 100
 */
export function retryDelayMs(attempt: number, options: { baseMs: number; capMs: number; retryAfter?: string }): number {
  const seconds = options.retryAfter === undefined ? NaN : Number(options.retryAfter);
  const wanted = Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : options.baseMs * 2 ** (attempt - 1);
  return Math.min(options.capMs, wanted);
}
