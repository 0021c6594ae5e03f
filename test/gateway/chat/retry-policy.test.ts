import { test } from 'node:test';
import assert from 'node:assert/strict';
import { retryDelayMs, shouldRetry, type RetryCase } from '../../../gateway/chat/retry-policy.js';

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
