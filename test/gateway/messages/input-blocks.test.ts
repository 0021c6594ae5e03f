/**
 * conversationOf as a table: each Messages conversation and the upstream messages it becomes,
 * split into `history` (up to the last assistant turn that echoes gateway blocks) and `messages`;
 * and each block it refuses, with the field the 400 names.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { conversationOf, type InputMessage } from '../../../gateway/messages/input-blocks.js';
import { InvalidRequest } from '../../../gateway/errors.js';
import type { UpstreamMessage } from '../../../gateway/chat/chat-types.js';

const call = (id: string, name: string, args: string) => ({ id, type: 'function' as const, function: { name, arguments: args } });

const cases: Array<{ name: string; input: InputMessage[]; history: UpstreamMessage[]; messages: UpstreamMessage[] }> = [
  {
    name: 'string content in both roles',
    input: [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello.' },
    ],
    history: [],
    messages: [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello.' },
    ],
  },
  {
    name: 'text blocks joined by a blank line; thinking dropped',
    input: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'One.' },
          { type: 'text', text: 'Two.' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'x', signature: 's' },
          { type: 'text', text: 'Ok.' },
        ],
      },
    ],
    history: [],
    messages: [
      { role: 'user', content: 'One.\n\nTwo.' },
      { role: 'assistant', content: 'Ok.' },
    ],
  },
  {
    name: "a client tool round: tool_use, then the results before the user's text; is_error says so in the text",
    input: [
      { role: 'user', content: 'Go.' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Calling.' },
          { type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Here.' },
          { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'boom' }], is_error: true },
        ],
      },
    ],
    history: [],
    messages: [
      { role: 'user', content: 'Go.' },
      { role: 'assistant', content: 'Calling.', tool_calls: [call('toolu_1', 'f', '{"a":1}')] },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'Error: boom' },
      { role: 'user', content: 'Here.' },
    ],
  },
  {
    name: 'echoed gateway rounds become the rounds they were, and everything up to them is history',
    input: [
      { role: 'user', content: 'Q' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'mcp_tool_use', id: 'mcptoolu_a', name: 'echo', server_name: 'echo', input: { text: 'a' } },
          { type: 'mcp_tool_use', id: 'mcptoolu_b', name: 'echo', server_name: 'echo', input: { text: 'b' } },
          { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_a', is_error: false, content: [{ type: 'text', text: '{"text":"a"}' }] },
          { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_b', is_error: false, content: '{"text":"b"}' },
          { type: 'mcp_tool_use', id: 'mcptoolu_c', name: 'echo', server_name: 'echo', input: {} },
          { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_c', is_error: true, content: [{ type: 'text', text: '{"error":1}' }] },
          { type: 'text', text: 'Now yours.' },
          { type: 'tool_use', id: 'toolu_9', name: 'mine', input: {} },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: 'done' }] },
    ],
    history: [
      { role: 'user', content: 'Q' },
      {
        role: 'assistant',
        content: 'Looking.',
        tool_calls: [call('mcptoolu_a', 'echo', '{"text":"a"}'), call('mcptoolu_b', 'echo', '{"text":"b"}')],
      },
      { role: 'tool', tool_call_id: 'mcptoolu_a', content: '{"text":"a"}' },
      { role: 'tool', tool_call_id: 'mcptoolu_b', content: '{"text":"b"}' },
      { role: 'assistant', content: null, tool_calls: [call('mcptoolu_c', 'echo', '{}')] },
      { role: 'tool', tool_call_id: 'mcptoolu_c', content: '{"error":1}' },
      { role: 'assistant', content: 'Now yours.', tool_calls: [call('toolu_9', 'mine', '{}')] },
    ],
    messages: [{ role: 'tool', tool_call_id: 'toolu_9', content: 'done' }],
  },
  {
    name: 'a turn after the echo is restorable again (messages), the echo stays history',
    input: [
      { role: 'user', content: 'Q' },
      {
        role: 'assistant',
        content: [
          { type: 'mcp_tool_use', id: 'mcptoolu_a', name: 'echo', server_name: 'echo', input: {} },
          { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_a', is_error: false, content: 'r' },
          { type: 'text', text: 'Answer.' },
        ],
      },
      { role: 'user', content: 'More?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_2', name: 'mine', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2' }] },
    ],
    history: [
      { role: 'user', content: 'Q' },
      { role: 'assistant', content: null, tool_calls: [call('mcptoolu_a', 'echo', '{}')] },
      { role: 'tool', tool_call_id: 'mcptoolu_a', content: 'r' },
      { role: 'assistant', content: 'Answer.' },
    ],
    messages: [
      { role: 'user', content: 'More?' },
      { role: 'assistant', content: null, tool_calls: [call('toolu_2', 'mine', '{}')] },
      { role: 'tool', tool_call_id: 'toolu_2', content: '' },
    ],
  },
];

for (const c of cases) {
  test(`conversationOf: ${c.name}`, () => {
    assert.deepEqual(conversationOf(c.input), { history: c.history, messages: c.messages });
  });
}

const refusals: Array<{ input: InputMessage[]; param: string }> = [
  { input: [{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'image' }] }], param: 'messages[0].content[1].type' },
  { input: [{ role: 'assistant', content: [{ type: 'document' }] }], param: 'messages[0].content[0].type' },
  { input: [{ role: 'user', content: [{ type: 'server_tool_use' }] }], param: 'messages[0].content[0].type' },
  {
    input: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'image' }] }] }],
    param: 'messages[0].content[0].content[0].type',
  },
  { input: [{ role: 'user', content: [{ type: 'tool_result' }] }], param: 'messages[0].content[0].tool_use_id' },
  {
    input: [{ role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input: 'x' }] }],
    param: 'messages[0].content[0].input',
  },
  { input: [{ role: 'user', content: [{ type: 'text' }] }], param: 'messages[0].content[0].text' },
];

for (const { input, param } of refusals) {
  test(`conversationOf refuses with a 400 naming ${param}`, () => {
    assert.throws(
      () => conversationOf(input),
      (err: unknown) => err instanceof InvalidRequest && err.param === param,
    );
  });
}
