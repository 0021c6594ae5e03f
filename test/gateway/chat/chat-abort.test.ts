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

test('a branch is aborted with the chat and for its reason, or alone without touching the chat; release unlinks it', () => {
  const chat = new ChatAbort();
  const attempt = chat.branch();
  attempt.abort.abort('its own timeout');
  assert.equal(chat.aborted, false, 'the chat goes on');
  attempt.release();

  const second = chat.branch();
  const third = chat.branch();
  third.release();
  chat.abort('client left');
  assert.equal(second.abort.reason, 'client left');
  assert.equal(third.abort.aborted, false, 'a released branch no longer follows');

  const afterwards = chat.branch();
  assert.equal(afterwards.abort.reason, 'client left', 'a branch of an aborted chat starts aborted');
});

test('wait resolves after its time, or rejects with the reason as soon as the handle is aborted', async () => {
  const abort = new ChatAbort();
  await abort.wait(1);
  const waiting = abort.wait(60_000);
  abort.abort(new Error('deadline'));
  await assert.rejects(waiting, /deadline/);
  await assert.rejects(abort.wait(1), /deadline/);
});
