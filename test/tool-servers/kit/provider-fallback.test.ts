import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  describeFailure,
  firstAvailable,
  HttpFailure,
  HttpStatusError,
  ToolError,
  type Provider,
} from '../../../tool-servers/kit/index.js';

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
  assert.deepEqual(result, {
    provider: 'good',
    value: ['answer'],
    failures: ['keyless: skipped (no KEY)', 'broken: HTTP 500', 'empty: no results'],
  });
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
    {
      name: 'ToolError',
      code: 'upstream_unavailable',
      message: 'All providers failed: a: HTTP 429 (rate limited); b: timed out after 100 ms; c: skipped (not configured)',
    },
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
    firstAvailable([provider('a', async () => Promise.reject(final)), provider('b', async () => 1)], {
      signal,
      isFinal: (e) => e === final,
    }),
    (err) => err === final,
  );
  await assert.rejects(
    firstAvailable([provider('a', async () => Promise.reject(new ToolError('invalid_arguments', 'bad'))), provider('b', async () => 1)], {
      signal,
    }),
    { code: 'invalid_arguments' },
  );
});

test('a cancelled signal stops before asking anyone', async () => {
  const controller = new AbortController();
  controller.abort();
  await assert.rejects(firstAvailable([provider('a', async () => 1)], { signal: controller.signal }), {
    code: 'timeout',
    message: 'The call was cancelled.',
  });
});

test('deadlineMs bounds the whole chain: the provider being asked is stopped, later ones are not asked, and all are listed', async () => {
  const started = Date.now();
  const asked: string[] = [];
  const ask = <T>(name: string, run: () => Promise<T>): Provider<T> => ({ name, run: () => (asked.push(name), run()) });
  await assert.rejects(
    firstAvailable(
      [
        ask('a', () => Promise.reject(new HttpFailure('timeout', 'timed out after 60 ms'))),
        // Ignores its signal and never answers: the deadline must still end the chain.
        ask('b', () => new Promise<number>(() => undefined)),
        ask('c', async () => 1),
        provider('d', async () => 1, { available: false }),
      ],
      { signal, deadlineMs: 120 },
    ),
    {
      name: 'ToolError',
      code: 'upstream_unavailable',
      message:
        'All providers failed: a: timed out after 60 ms; b: stopped at the 120 ms deadline; c: not asked (the 120 ms deadline had passed); d: skipped (not configured)',
    },
  );
  assert.deepEqual(asked, ['a', 'b']);
  assert.ok(Date.now() - started < 1000);
});

test('deadlineMs reaches each provider through its signal, and a chain that ends earlier clears it', async () => {
  let seen: AbortSignal | undefined;
  const result = await firstAvailable([{ name: 'a', run: async (s: AbortSignal) => ((seen = s), 1) }], { signal, deadlineMs: 50 });
  assert.equal(result.value, 1);
  assert.equal(seen?.aborted, false);
  const stuck = firstAvailable(
    [
      {
        name: 'a',
        run: (s: AbortSignal) =>
          new Promise<number>((_resolve, reject) => s.addEventListener('abort', () => reject(new HttpFailure('aborted', 'cancelled')))),
      },
    ],
    { signal, deadlineMs: 50 },
  );
  await assert.rejects(stuck, { message: 'All providers failed: a: stopped at the 50 ms deadline' });
});

test('isNotFound: a provider saying "does not exist" does not stop the chain; only all of them saying so is that error', async () => {
  const gone = (detail: string) => new ToolError('not_found', `gone (${detail})`);
  const isNotFound = (err: unknown) => err instanceof ToolError && err.code === 'not_found';
  const found = await firstAvailable([provider('a', async () => Promise.reject(gone('a'))), provider('b', async () => 2)], {
    signal,
    isNotFound,
  });
  assert.deepEqual(found, { provider: 'b', value: 2, failures: ['a: gone (a)'] });
  await assert.rejects(
    firstAvailable(
      [
        provider('a', async () => Promise.reject(gone('a'))),
        provider('b', async () => Promise.reject(gone('b'))),
        provider('c', async () => 3, { available: false }),
      ],
      { signal, isNotFound },
    ),
    (err) => err instanceof ToolError && err.message === 'gone (b)',
  );
  await assert.rejects(
    firstAvailable(
      [provider('a', async () => Promise.reject(gone('a'))), provider('b', async () => Promise.reject(new HttpStatusError(500, '')))],
      { signal, isNotFound },
    ),
    { code: 'upstream_unavailable', message: 'All providers failed: a: gone (a); b: HTTP 500' },
  );
});

test('describeFailure never leaks more than a short reason', () => {
  assert.equal(describeFailure(new SyntaxError('Unexpected token')), 'unreadable response');
  assert.equal(describeFailure(new Error('https://key@host')), 'unexpected response');
  assert.equal(describeFailure(new ToolError('not_found', 'gone')), 'gone');
});

test('each provider gets the request with the signal; one that says it cannot answer this request is skipped with its reason', async () => {
  type Request = { currency: string };
  const seen: Array<[string, Request]> = [];
  const quote = (name: string, price: number, onlyUsd = false): Provider<number, Request> => ({
    name,
    unsupported: onlyUsd ? ({ currency }) => (currency === 'usd' ? undefined : 'prices in USD only') : undefined,
    run: async (runSignal, request) => (assert.ok(runSignal instanceof AbortSignal), seen.push([name, request]), price),
  });
  const providers = [quote('usd-only', 1, true), quote('any', 2)];
  const usd = await firstAvailable(providers, { signal, request: { currency: 'usd' } });
  assert.deepEqual(usd, { provider: 'usd-only', value: 1, failures: [] });
  assert.deepEqual(await firstAvailable(providers, { signal, request: { currency: 'eur' } }), {
    provider: 'any',
    value: 2,
    failures: ['usd-only: skipped (prices in USD only)'],
  });
  assert.deepEqual(seen, [
    ['usd-only', { currency: 'usd' }],
    ['any', { currency: 'eur' }],
  ]);
});
