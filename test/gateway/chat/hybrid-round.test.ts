import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callIdsIn, splitToolCalls, withUsableCallIds } from '../../../gateway/chat/hybrid-round.js';
import type { UpstreamToolCall } from '../../../gateway/chat/chat-types.js';

const call = (name: string, id = `id-of-${name}-0000`): UpstreamToolCall => ({ id, type: 'function', function: { name, arguments: '{}' } });
const clientNames = new Set(['read_file', 'ask_user']);

test('splitToolCalls: by whose the function is, unknown names to the gateway, parallel false keeps the first client call', () => {
  const calls = [call('read_file'), call('echo'), call('nobody'), call('ask_user')];
  const cases: Array<[{ parallel?: boolean }, string[], string[], string[]]> = [
    [{}, ['echo', 'nobody'], ['read_file', 'ask_user'], ['read_file', 'echo', 'nobody', 'ask_user']],
    [{ parallel: true }, ['echo', 'nobody'], ['read_file', 'ask_user'], ['read_file', 'echo', 'nobody', 'ask_user']],
    [{ parallel: false }, ['echo', 'nobody'], ['read_file'], ['read_file', 'echo', 'nobody']],
  ];
  const names = (list: UpstreamToolCall[]) => list.map((c) => c.function.name);
  for (const [options, gateway, client, round] of cases) {
    const split = splitToolCalls(calls, clientNames, options);
    assert.deepEqual(names(split.gateway), gateway);
    assert.deepEqual(names(split.client), client);
    // The round's assistant message keeps the model's order.
    assert.deepEqual(names(split.calls), round);
  }
  assert.deepEqual(splitToolCalls([call('echo')], clientNames).client, []);
});

test('withUsableCallIds: long unique ids stay; missing, short, repeated or already used ones are replaced', () => {
  const used = new Set(['chatcmpl-tool-old00000']);
  const calls = [
    call('a', 'chatcmpl-tool-keep0000'),
    call('b', ''),
    call('c', 'call_0'),
    call('d', 'chatcmpl-tool-keep0000'),
    call('e', 'chatcmpl-tool-old00000'),
    call('f', 'Ab3dE6gH9'), // Mistral's 9-character ids pass
  ];
  const out = withUsableCallIds(calls, used);
  assert.equal(out[0], calls[0]);
  assert.equal(out[5].id, 'Ab3dE6gH9');
  for (const i of [1, 2, 3, 4]) assert.match(out[i].id, /^call_[A-Za-z0-9]{24}$/);
  assert.equal(new Set(out.map((c) => c.id)).size, 6);
  for (const c of out) assert.ok(used.has(c.id));
});

test('callIdsIn: ids of assistant calls and tool results', () => {
  const ids = callIdsIn([
    { role: 'user', content: 'x' },
    { role: 'assistant', content: null, tool_calls: [call('a', 'one'), call('b', 'two')] },
    { role: 'tool', content: 'r', tool_call_id: 'three' },
  ]);
  assert.deepEqual([...ids].sort(), ['one', 'three', 'two']);
});

test('withUsableCallIds: a call of a client function always gets a fresh id, even a long unique upstream one', () => {
  const used = new Set<string>();
  const out = withUsableCallIds(
    [call('echo', 'chatcmpl-tool-keep0000'), call('read_file', 'functions.read_file:0')],
    used,
    new Set(['read_file']),
  );
  assert.equal(out[0].id, 'chatcmpl-tool-keep0000');
  assert.match(out[1].id, /^call_[A-Za-z0-9]{24}$/);
});
