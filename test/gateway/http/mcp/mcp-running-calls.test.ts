import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunningCalls } from '../../../../gateway/http/mcp/mcp-running-calls.js';

const WALLET = '0x52908400098527886e0f7030069857d2e4169ee7';
const OTHER = '0x000000000000000000000000000000000000dead';

test('cancel aborts the calls of that wallet with that id, and no others', () => {
  const running = new RunningCalls();
  const target = running.start(WALLET, 7);
  const sameIdOtherWallet = running.start(OTHER, 7);
  const numberVsString = running.start(WALLET, '7');
  assert.equal(running.cancel(WALLET, 7, 'user stop'), 1);
  assert.equal(target.signal.aborted, true);
  assert.equal((target.signal.reason as Error).message, 'cancelled by the client: user stop');
  assert.deepEqual([sameIdOtherWallet.signal.aborted, numberVsString.signal.aborted], [false, false]);
  assert.equal(running.cancel(WALLET, 8), 0);
});

test('two clients of one wallet with one id are both cancelled; ended calls are forgotten', () => {
  const running = new RunningCalls();
  const first = running.start(WALLET, 0);
  const second = running.start(WALLET, 0);
  assert.equal(running.size, 2);
  first.end();
  assert.equal(running.size, 1);
  assert.equal(running.cancel(WALLET, 0), 1);
  assert.deepEqual([first.signal.aborted, second.signal.aborted], [false, true]);
  second.end();
  assert.equal(running.size, 0);
  assert.equal(running.cancel(WALLET, 0), 0);
});

test('the request going away and shutdown abort a call; a call started after either is born aborted', () => {
  const shutdown = new AbortController();
  const running = new RunningCalls(shutdown.signal);
  const request = new AbortController();
  const call = running.start(WALLET, 1, request.signal);
  request.abort(new Error('client disconnected'));
  assert.equal((call.signal.reason as Error).message, 'client disconnected');
  assert.equal(running.start(WALLET, 2, request.signal).signal.aborted, true);

  const longRunning = running.start(WALLET, 3);
  shutdown.abort(new Error('shutting down'));
  assert.equal((longRunning.signal.reason as Error).message, 'shutting down');
  assert.equal(running.start(WALLET, 4).signal.aborted, true);
});
