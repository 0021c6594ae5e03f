import { test } from 'node:test';
import assert from 'node:assert/strict';
import { untilAborted } from '../../../tool-servers/kit/index.js';

const never = new Promise<number>(() => undefined);

test('untilAborted passes the work through while the signal is live', async () => {
  assert.equal(await untilAborted(Promise.resolve(7), new AbortController().signal), 7);
  await assert.rejects(untilAborted(Promise.reject(new Error('boom')), new AbortController().signal), { message: 'boom' });
});

test('untilAborted leaves work that never settles with a timeout ToolError when the signal aborts', async () => {
  const controller = new AbortController();
  const waiting = untilAborted(never, controller.signal);
  controller.abort();
  await assert.rejects(waiting, { name: 'ToolError', code: 'timeout', message: 'The call was cancelled.' });
  const aborted = AbortSignal.abort();
  await assert.rejects(untilAborted(never, aborted), { code: 'timeout' });
});
