import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  nextAttempt,
  retryDelayMs,
  shouldRetry,
  type AttemptCase,
  type NextAttempt,
  type RetryCase,
} from '../../../gateway/chat/retry-policy.js';

test('shouldRetry: connection failures, 429 and 5xx are retried while attempts remain; nothing else is', () => {
  const table: Array<[RetryCase, boolean]> = [
    [{ attempt: 1, maxAttempts: 3, errorCode: 'ECONNREFUSED' }, true],
    [{ attempt: 2, maxAttempts: 3, errorCode: 'ECONNRESET' }, true],
    [{ attempt: 1, maxAttempts: 3, errorCode: 'UND_ERR_SOCKET' }, true],
    [{ attempt: 1, maxAttempts: 3, errorCode: 'UND_ERR_CONNECT_TIMEOUT' }, true],
    [{ attempt: 3, maxAttempts: 3, errorCode: 'ECONNREFUSED' }, false],
    [{ attempt: 1, maxAttempts: 3, errorCode: 'UND_ERR_ABORTED' }, false],
    [{ attempt: 1, maxAttempts: 3, errorCode: 'ENOTFOUND' }, false],
    [{ attempt: 1, maxAttempts: 3 }, false],
    [{ attempt: 1, maxAttempts: 3, status: 429 }, true],
    [{ attempt: 1, maxAttempts: 3, status: 500 }, true],
    [{ attempt: 1, maxAttempts: 3, status: 502 }, true],
    [{ attempt: 1, maxAttempts: 3, status: 503 }, true],
    [{ attempt: 1, maxAttempts: 3, status: 504 }, true],
    [{ attempt: 1, maxAttempts: 3, status: 501 }, false],
    [{ attempt: 1, maxAttempts: 3, status: 400 }, false],
    [{ attempt: 1, maxAttempts: 3, status: 401 }, false],
    [{ attempt: 1, maxAttempts: 3, status: 404 }, false],
    [{ attempt: 3, maxAttempts: 3, status: 503 }, false],
    [{ attempt: 1, maxAttempts: 1, status: 503 }, false],
  ];
  for (const [c, expected] of table) assert.equal(shouldRetry(c), expected, JSON.stringify(c));
});

test('retryDelayMs: exponential from the base, Retry-After when given, never above the cap', () => {
  assert.equal(retryDelayMs(1, { baseMs: 100, capMs: 2000 }), 100);
  assert.equal(retryDelayMs(2, { baseMs: 100, capMs: 2000 }), 200);
  assert.equal(retryDelayMs(6, { baseMs: 100, capMs: 2000 }), 2000);
  assert.equal(retryDelayMs(1, { baseMs: 100, capMs: 2000, retryAfter: '1' }), 1000);
  assert.equal(retryDelayMs(1, { baseMs: 100, capMs: 2000, retryAfter: '30' }), 2000);
  assert.equal(retryDelayMs(1, { baseMs: 100, capMs: 2000, retryAfter: 'soon' }), 100);
});

test('nextAttempt: a fleet fails over whatever failed before output reached the client; one deployment retries only what got no answer', () => {
  const broken = { kind: 'broken' as const };
  const timeout = { kind: 'timeout' as const };
  const refused = { kind: 'connect' as const, errorCode: 'ECONNREFUSED' };
  const noHost = { kind: 'connect' as const, errorCode: 'ENOTFOUND' };
  const status = (s: number) => ({ kind: 'status' as const, status: s });
  const fleet = (failure: AttemptCase['failure'], more: Partial<AttemptCase> = {}): AttemptCase => ({
    attempt: 1,
    maxAttempts: 3,
    failure,
    wrote: false,
    fleet: true,
    ...more,
  });
  const single = (failure: AttemptCase['failure'], more: Partial<AttemptCase> = {}) => fleet(failure, { fleet: false, ...more });
  const table: Array<[AttemptCase, NextAttempt]> = [
    // Several deployments: another one, at once.
    [fleet(refused), 'fail-over'],
    [fleet(noHost), 'fail-over'],
    [fleet(status(503)), 'fail-over'],
    [fleet(status(500)), 'fail-over'],
    [fleet(status(501)), 'fail-over'],
    [fleet(status(429)), 'fail-over'],
    [fleet(timeout), 'fail-over'],
    [fleet(broken), 'fail-over'],
    [fleet(broken, { attempt: 2 }), 'fail-over'],
    // ... but never once the call's output reached the client, never past the budget, never a request the upstream refused.
    [fleet(broken, { wrote: true }), 'give-up'],
    [fleet(timeout, { wrote: true }), 'give-up'],
    [fleet(broken, { attempt: 3 }), 'give-up'],
    [fleet(status(400)), 'give-up'],
    [fleet(status(401)), 'give-up'],
    [fleet(undefined), 'give-up'],
    // One deployment: as before the fleet, what got no answer is repeated there (retry-policy's shouldRetry).
    [single(refused), 'retry'],
    [single(status(503)), 'retry'],
    [single(status(429)), 'retry'],
    [single(status(501)), 'give-up'],
    [single(noHost), 'give-up'],
    [single(broken), 'give-up'],
    [single(timeout), 'give-up'],
    [single(refused, { attempt: 3 }), 'give-up'],
    [single(undefined), 'give-up'],
  ];
  for (const [c, expected] of table) assert.equal(nextAttempt(c), expected, JSON.stringify(c));
});
