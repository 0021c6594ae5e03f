/**
 * MessageOutput on its own: the blocks and the events it sends for text, a gateway tool round and
 * the client's calls, in order, each event with the block as it was then.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageOutput } from '../../../gateway/messages/message-output.js';

function recorder() {
  const sent: Array<Record<string, unknown>> = [];
  // Serialized at once, as the writer does.
  return {
    sent,
    events: { send: (type: string, fields: Record<string, unknown>) => sent.push(JSON.parse(JSON.stringify({ type, ...fields }))) },
  };
}

test('text, a gateway round and a client call: the blocks, and each block started, filled and stopped in order', () => {
  const { sent, events } = recorder();
  const output = new MessageOutput({ serverOf: (tool) => (tool === 'echo' ? 'echo-server' : 'other'), events });
  output.append('Let me ');
  output.append('check.');
  output.toolsRunning([
    { id: 'call_1', type: 'function', function: { name: 'echo', arguments: '{"text":"a"}' } },
    { id: 'call_2', type: 'function', function: { name: 'lookup', arguments: 'not json' } },
  ]);
  output.toolsDone(
    [
      { round: 1, tool: 'echo', arguments: { text: 'a' }, ok: true, duration_ms: 1 },
      { round: 1, tool: 'lookup', arguments: 'not json', ok: false, duration_ms: 1, error: { code: 'invalid_arguments', message: 'bad' } },
    ],
    ['{"text":"a"}', '{"error":{"code":"invalid_arguments","message":"bad"}}'],
  );
  output.append('\n\nNow yours.');
  output.toolUses([{ id: 'call_3', type: 'function', function: { name: 'mine', arguments: '{"x":1}' } }]);
  output.finish();

  const [use1, use2] = output.blocks.filter((b) => b.type === 'mcp_tool_use');
  assert.match(use1.id, /^mcptoolu_[A-Za-z0-9_-]{24}$/);
  assert.deepEqual(output.blocks, [
    { type: 'text', text: 'Let me check.' },
    { type: 'mcp_tool_use', id: use1.id, name: 'echo', server_name: 'echo-server', input: { text: 'a' } },
    { type: 'mcp_tool_use', id: use2.id, name: 'lookup', server_name: 'other', input: {} },
    { type: 'mcp_tool_result', tool_use_id: use1.id, is_error: false, content: [{ type: 'text', text: '{"text":"a"}' }] },
    {
      type: 'mcp_tool_result',
      tool_use_id: use2.id,
      is_error: true,
      content: [{ type: 'text', text: '{"error":{"code":"invalid_arguments","message":"bad"}}' }],
    },
    { type: 'text', text: 'Now yours.' },
    { type: 'tool_use', id: 'call_3', name: 'mine', input: { x: 1 } },
  ]);
  assert.deepEqual(
    sent.map((e) => [
      e.type,
      e.index,
      (e.content_block as { type?: string } | undefined)?.type ?? (e.delta as { type?: string } | undefined)?.type,
    ]),
    [
      ['content_block_start', 0, 'text'],
      ['content_block_delta', 0, 'text_delta'],
      ['content_block_delta', 0, 'text_delta'],
      ['content_block_stop', 0, undefined],
      ['content_block_start', 1, 'mcp_tool_use'],
      ['content_block_stop', 1, undefined],
      ['content_block_start', 2, 'mcp_tool_use'],
      ['content_block_stop', 2, undefined],
      ['content_block_start', 3, 'mcp_tool_result'],
      ['content_block_stop', 3, undefined],
      ['content_block_start', 4, 'mcp_tool_result'],
      ['content_block_stop', 4, undefined],
      ['content_block_start', 5, 'text'],
      ['content_block_delta', 5, 'text_delta'],
      ['content_block_stop', 5, undefined],
      ['content_block_start', 6, 'tool_use'],
      ['content_block_delta', 6, 'input_json_delta'],
      ['content_block_stop', 6, undefined],
    ],
  );
  // A text block starts empty; an mcp_tool_use block starts whole; a tool_use block starts empty and takes its input in one delta.
  assert.deepEqual(sent[0].content_block, { type: 'text', text: '' });
  assert.deepEqual(sent[4].content_block, output.blocks[1]);
  assert.deepEqual(sent[15].content_block, { type: 'tool_use', id: 'call_3', name: 'mine', input: {} });
  assert.deepEqual(sent[16].delta, { type: 'input_json_delta', partial_json: '{"x":1}' });
  assert.deepEqual(sent[13].delta, { type: 'text_delta', text: 'Now yours.' }, 'the blank line joining calls is dropped');
});

test('whitespace alone after a round opens no block', () => {
  const output = new MessageOutput({ serverOf: () => 'echo' });
  output.toolsRunning([{ id: 'c', type: 'function', function: { name: 'echo', arguments: '{}' } }]);
  output.toolsDone([{ round: 1, tool: 'echo', arguments: {}, ok: true, duration_ms: 1 }], ['{}']);
  output.append('\n\n');
  output.finish();
  assert.deepEqual(
    output.blocks.map((b) => b.type),
    ['mcp_tool_use', 'mcp_tool_result'],
  );
});
