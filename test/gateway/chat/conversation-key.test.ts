import { test } from 'node:test';
import assert from 'node:assert/strict';
import { conversationKey, HASHED_BYTES } from '../../../gateway/chat/conversation-key.js';
import type { UpstreamMessage } from '../../../gateway/chat/chat-types.js';

const WALLET = '0x52908400098527886e0f7030069857d2e4169ee7';
const system: UpstreamMessage = { role: 'system', content: 'Answer briefly.' };
const ask: UpstreamMessage = { role: 'user', content: 'What time is it in Paris?' };
const call = {
  id: 'call_abcdefgh12345678',
  type: 'function' as const,
  function: { name: 'get_time', arguments: '{"timezone":"Europe/Paris"}' },
};

test('every round, a continuation, a stored history and a later turn of one conversation share its key', () => {
  const key = conversationKey(WALLET, [system, ask]);
  assert.equal(typeof key, 'number');
  assert.ok(key! >= 0 && key! < 2 ** 32 && Number.isInteger(key));
  const rounds: UpstreamMessage[] = [
    system,
    ask,
    { role: 'assistant', content: null, tool_calls: [call] },
    { role: 'tool', content: '{"time":"14:05"}', tool_call_id: call.id },
  ];
  assert.equal(conversationKey(WALLET, rounds), key, 'a client-function continuation');
  assert.equal(
    conversationKey(WALLET, [...rounds, { role: 'assistant', content: 'It is 14:05.' }, { role: 'user', content: 'And Tokyo?' }]),
    key,
    'a later turn',
  );
  // A Responses request with previous_response_id: the stored conversation, then this turn's input.
  assert.equal(conversationKey(WALLET, rounds, [{ role: 'user', content: 'And Tokyo?' }]), key, 'a stored history');
  assert.equal(conversationKey(WALLET, undefined, [system, ask]), key);
  // The wallet is compared as an address: the checksummed form is the same wallet.
  assert.equal(conversationKey(WALLET.toUpperCase().replace('0X', '0x'), [system, ask]), key);
});

test('another wallet, another opening or another system message is another conversation', () => {
  const key = conversationKey(WALLET, [system, ask]);
  assert.notEqual(conversationKey('0x0000000000000000000000000000000000000001', [system, ask]), key);
  assert.notEqual(conversationKey(WALLET, [system, { role: 'user', content: 'What time is it in Tokyo?' }]), key);
  assert.notEqual(conversationKey(WALLET, [ask]), key);
});

test('no user message yet: no key; an opening past 4 KiB is keyed by its first 4 KiB', () => {
  assert.equal(conversationKey(WALLET, [system]), undefined);
  assert.equal(conversationKey(WALLET, []), undefined);
  const long = 'é'.repeat(HASHED_BYTES); // 2 bytes a character: the bound falls mid-message
  const key = conversationKey(WALLET, [{ role: 'user', content: `${long}A` }]);
  assert.equal(conversationKey(WALLET, [{ role: 'user', content: `${long}B` }]), key, 'only 4 KiB are hashed');
  assert.equal(
    conversationKey(WALLET, [{ role: 'system', content: long }]),
    conversationKey(WALLET, [{ role: 'system', content: `${long}x` }]),
  );
  assert.notEqual(conversationKey(WALLET, [{ role: 'system', content: long }]), undefined);
});
