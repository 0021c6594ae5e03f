import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeFailure, firstAvailable, HttpFailure, HttpStatusError, ToolError, type Provider } from '../../../tool-servers/kit/index.js';

const signal = new AbortController().signal;

function provider<T>(name: string, run: () => Promise<T>, extra: Partial<Provider<T>> = {}): Provider<T> {
  return { name, run: async () => run(), ...extra };
}

test('falls through failing, skipped and empty providers to the first real answer, listing each', async () => {
  const result = await firstAvailable(
    [
      provider('keyless', async () => [], { available: false, unavailableReason: 'no KEY' }),
      provider('broken', async () => {
        throw new HttpStatusError(500, 'oops');
      }),
      provider('empty', async () => []),
      provider('good', async () => ['answer']),
      provider('never', async () => assert.fail('not asked')),
    ],
    { signal, isEmpty: (v: string[]) => v.length === 0 },
  );
  assert.deepEqual(result, { provider: 'good', value: ['answer'], failures: ['keyless: skipped (no KEY)', 'broken: HTTP 500', 'empty: no results'] });
});

test('every provider failing → upstream_unavailable listing what each said', async () => {
  await assert.rejects(
    firstAvailable(
      [
        provider('a', async () => {
          throw new HttpStatusError(429, '');
        }),
        provider('b', async () => {
          throw new HttpFailure('timeout', 'timed out after 100 ms');
        }),
        provider('c', async () => 1, { available: false }),
      ],
      { signal },
    ),
    { name: 'ToolError', code: 'upstream_unavailable', message: 'All providers failed: a: HTTP 429 (rate limited); b: timed out after 100 ms; c: skipped (not configured)' },
  );
});

test('every answering provider empty → not_found', async () => {
  await assert.rejects(
    firstAvailable([provider('a', async () => ''), provider('b', async () => '')], { signal, isEmpty: (v) => v === '' }),
    { name: 'ToolError', code: 'not_found', message: 'No results. a: no results; b: no results' },
  );
});

test('a final error or a non-upstream ToolError stops the chain', async () => {
  const final = new Error('does not exist');
  await assert.rejects(
    firstAvailable([provider('a', async () => Promise.reject(final)), provider('b', async () => 1)], { signal, isFinal: (e) => e === final }),
    (err) => err === final,
  );
  await assert.rejects(
    firstAvailable([provider('a', async () => Promise.reject(new ToolError('invalid_arguments', 'bad'))), provider('b', async () => 1)], { signal }),
    { code: 'invalid_arguments' },
  );
});

test('a cancelled signal stops before asking anyone', async () => {
  const controller = new AbortController();
  controller.abort();
  await assert.rejects(firstAvailable([provider('a', async () => 1)], { signal: controller.signal }), { code: 'timeout', message: 'The call was cancelled.' });
});

test('describeFailure never leaks more than a short reason', () => {
  assert.equal(describeFailure(new SyntaxError('Unexpected token')), 'unreadable response');
  assert.equal(describeFailure(new Error('https://key@host')), 'unexpected response');
  assert.equal(describeFailure(new ToolError('not_found', 'gone')), 'gone');
});
