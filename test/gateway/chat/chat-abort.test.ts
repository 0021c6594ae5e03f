import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChatAbort } from '../../../gateway/chat/chat-abort.js';

test('ChatAbort: the first reason wins, the emitter fires once, the signal follows whenever it is made', () => {
  const early = new ChatAbort();
  const heard: string[] = [];
  early.emitter.on('abort', () => heard.push('abort'));
  const signal = early.signal;
  assert.equal(signal.aborted, false);
  assert.equal(early.aborted, false);
  early.abort('first');
  early.abort('second');
  assert.deepEqual(heard, ['abort']);
  assert.equal(early.reason, 'first');
  assert.equal(signal.aborted, true);
  assert.equal(signal.reason, 'first');

  const late = new ChatAbort();
  late.abort('gone');
  assert.equal(late.signal.aborted, true);
  assert.equal(late.signal.reason, 'gone');
});
