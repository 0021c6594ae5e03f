/**
 * Output items from the chat loop's progress, without a server: the text split into message items
 * around tool rounds (the joining blank line dropped), mcp_call items with their results or errors,
 * function_call items, and the events each step sends, in order.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ResponseOutput } from '../../../gateway/responses/response-output.js';

function recorded() {
  const sent: Array<{ type: string; fields: Record<string, unknown> }> = [];
  return {
    sent,
    events: { send: (type: string, fields: Record<string, unknown>) => sent.push({ type, fields: structuredClone(fields) }) },
  };
}

const call = (id: string, name: string, args: string) => ({ id, type: 'function' as const, function: { name, arguments: args } });

test('text, a tool round, more text: two message items around the mcp_call items; answerText is the last', () => {
  const { sent, events } = recorded();
  const output = new ResponseOutput({ serverOf: (tool) => (tool === 'echo' ? 'fixtures' : 'other'), events });
  output.append('Looking');
  output.append(' it up.');
  output.toolsRunning([call('c1', 'echo', '{"text":"a"}'), call('c2', 'fail', '{}')]);
  output.toolsDone(
    [
      { round: 1, tool: 'echo', arguments: { text: 'a' }, ok: true, duration_ms: 1 },
      { round: 1, tool: 'fail', arguments: {}, ok: false, duration_ms: 1, error: { code: 'tool_error', message: 'broke' } },
    ],
    ['{"text":"a"}', '{"error":{"code":"tool_error","message":"broke"}}'],
  );
  output.append('\n\nFound it.');
  output.finish('completed');

  assert.deepEqual(
    output.items.map((item) => [item.type, item.status]),
    [
      ['message', 'completed'],
      ['mcp_call', 'completed'],
      ['mcp_call', 'failed'],
      ['message', 'completed'],
    ],
  );
  const [first, ok, failed, last] = output.items;
  assert.ok(first.type === 'message' && last.type === 'message' && ok.type === 'mcp_call' && failed.type === 'mcp_call');
  assert.equal(first.content[0].text, 'Looking it up.');
  assert.equal(last.content[0].text, 'Found it.', 'the blank line that joins calls in chat starts no item');
  assert.deepEqual([ok.server_label, ok.output, ok.error], ['fixtures', '{"text":"a"}', null]);
  assert.deepEqual([failed.server_label, failed.output, failed.error], ['other', null, 'broke']);
  assert.equal(output.answerText, 'Found it.');
  assert.deepEqual(
    sent.map((e) => e.type),
    [
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.mcp_call_arguments.delta',
      'response.mcp_call_arguments.done',
      'response.mcp_call.in_progress',
      'response.output_item.added',
      'response.mcp_call_arguments.delta',
      'response.mcp_call_arguments.done',
      'response.mcp_call.in_progress',
      'response.mcp_call.completed',
      'response.output_item.done',
      'response.mcp_call.failed',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
    ],
  );
  // Each item is announced as it was then: empty, in progress.
  assert.deepEqual(sent[0].fields.item, { id: first.id, type: 'message', status: 'in_progress', role: 'assistant', content: [] });
  assert.equal((sent[7].fields.item as { arguments: string }).arguments, '');
  assert.equal(sent[21].fields.delta, 'Found it.');
});

test('calls of the client functions close the text and become function_call items', () => {
  const { sent, events } = recorded();
  const output = new ResponseOutput({ serverOf: () => 'x', events });
  output.append('Asking you.');
  output.functionCalls([call('call_1', 'get_weather', '{"city":"Oslo"}')]);
  output.finish('completed');
  const [message, fn] = output.items;
  assert.equal(message.status, 'completed');
  assert.ok(fn.type === 'function_call');
  assert.deepEqual([fn.call_id, fn.name, fn.arguments, fn.status], ['call_1', 'get_weather', '{"city":"Oslo"}', 'completed']);
  assert.deepEqual(
    sent.slice(-4).map((e) => e.type),
    [
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
    ],
  );
  assert.deepEqual(sent.at(-2)?.fields, { item_id: fn.id, output_index: 1, name: 'get_weather', arguments: '{"city":"Oslo"}' });
});

test('no text at all: no message item; an open message at the end of an incomplete answer is incomplete', () => {
  const silent = new ResponseOutput({ serverOf: () => 'x' });
  silent.append('');
  silent.finish('completed');
  assert.deepEqual(silent.items, []);
  const cut = new ResponseOutput({ serverOf: () => 'x' });
  cut.append('Half');
  cut.finish('incomplete');
  assert.equal(cut.items[0].status, 'incomplete');
});
