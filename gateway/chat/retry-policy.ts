/**
 * When an upstream call is worth repeating, and where. Pure functions, so the rules are tested
 * with tables. A model with one deployment repeats a call that got no answer (a connection that
 * failed, 429, 5xx), with backoff. A model with several sends a failed call to another
 * deployment (never the same one twice in a row) whenever none of the call's output reached the
 * client: a failure before the answer, a timeout, a stream that broke before its first visible
 * text (any time, for an answer the client gets whole). Either way within `maxAttempts` per call.
 */
import type { FailureKind } from './upstream-errors.js';

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

export interface AttemptCase {
  /** Attempts made so far, counting the one that just failed. */
  attempt: number;
  maxAttempts: number;
  /** How the attempt failed; undefined for what no other attempt can mend (the client left, the deadline, a 402, a response too large). */
  failure?: { kind: FailureKind; status?: number; errorCode?: string };
  /** Some of this call's output already reached the client. */
  wrote: boolean;
  /** The model has more than one deployment. */
  fleet: boolean;
}

/** `fail-over`: another deployment, at once; `retry`: the same one after a backoff. */
export type NextAttempt = 'fail-over' | 'retry' | 'give-up';

/**
 * @example
 *   nextAttempt({ attempt: 1, maxAttempts: 3, failure: { kind: 'broken' }, wrote: false, fleet: true }) // 'fail-over'
 *   nextAttempt({ attempt: 1, maxAttempts: 3, failure: { kind: 'broken' }, wrote: false, fleet: false }) // 'give-up'
 */
export function nextAttempt(c: AttemptCase): NextAttempt {
  const { failure } = c;
  if (!failure || c.wrote || c.attempt >= c.maxAttempts) return 'give-up';
  if (!c.fleet) {
    if (failure.kind !== 'connect' && failure.kind !== 'status') return 'give-up';
    return shouldRetry({ attempt: c.attempt, maxAttempts: c.maxAttempts, status: failure.status, errorCode: failure.errorCode })
      ? 'retry'
      : 'give-up';
  }
  if (failure.kind === 'status') return failure.status === 429 || (failure.status ?? 0) >= 500 ? 'fail-over' : 'give-up';
  return 'fail-over';
}
