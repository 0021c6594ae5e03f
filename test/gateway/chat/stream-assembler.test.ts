import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StreamAssembler } from '../../../gateway/chat/stream-assembler.js';
import { ThinkFilter } from '../../../gateway/chat/think-filter.js';
import { capped } from '../../../gateway/chat/tool-round.js';
import { toFunctionTool, ToolOffer } from '../../../gateway/chat/tool-schemas.js';

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] });

test('ThinkFilter: tags split at every position are removed, other angle brackets survive', () => {
  const source = 'A<think>hidden</think>B <b> C<think>more';
  for (let cut = 0; cut <= source.length; cut++) {
    const filter = new ThinkFilter();
    const out = filter.push(source.slice(0, cut)) + filter.push(source.slice(cut)) + filter.end();
    assert.equal(out, 'AB <b> C', `cut at ${cut}`);
    assert.equal(filter.reasoningChars, 'hidden'.length + 'more'.length);
  }
  const open = new ThinkFilter();
  assert.equal(open.push('x <thi'), 'x ');
  assert.equal(open.end(), '<thi');
});

test('StreamAssembler: content deltas as they arrive, vLLM-style split tool calls per index, usage, finish reason', () => {
  const seen: string[] = [];
  const a = new StreamAssembler((t) => seen.push(t), { modelId: 'm' });
  a.push(chunk({ role: 'assistant', content: '' }));
  a.push(chunk({ reasoning_content: 'thinking' }));
  a.push(chunk({ content: 'Hel' }));
  a.push(chunk({ content: 'lo' }));
  a.push(chunk({ tool_calls: [{ index: 1, id: 'b', type: 'function', function: { name: 'two', arguments: '' } }] }));
  a.push(chunk({ tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'one', arguments: '{"x"' } }] }));
  a.push(chunk({ tool_calls: [{ index: 1, function: { arguments: '{}' } }] }));
  a.push(chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }));
  a.push(chunk({}, 'tool_calls'));
  a.push('not json');
  a.push(JSON.stringify({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } }));
  const round = a.finish();
  assert.deepEqual(seen, ['Hel', 'lo']);
  assert.equal(round.text, 'Hello');
  assert.deepEqual(round.toolCalls, [
    { id: 'a', type: 'function', function: { name: 'one', arguments: '{"x":1}' } },
    { id: 'b', type: 'function', function: { name: 'two', arguments: '{}' } },
  ]);
  assert.deepEqual(round.usage, { prompt_tokens: 7, completion_tokens: 3 });
  assert.equal(round.finishReason, 'tool_calls');
  assert.equal(round.producedChars, 'Hello'.length + 'thinking'.length + 'one{"x":1}two{}'.length);
});

test('StreamAssembler: Ollama-style whole calls (object arguments, no id) and a repeated name', () => {
  const a = new StreamAssembler(() => {}, { modelId: 'm' });
  a.push(
    chunk({ tool_calls: [{ function: { name: 'get_time', arguments: { zone: 'UTC' } } }, { function: { name: 'x', arguments: '{}' } }] }),
  );
  a.push(chunk({ tool_calls: [{ index: 1, function: { name: 'x' } }] }));
  a.push(chunk({ tool_calls: [{ index: 5, function: { arguments: '{}' } }] })); // no name: cannot run
  const round = a.finish();
  assert.deepEqual(round.toolCalls, [
    { id: 'call_0', type: 'function', function: { name: 'get_time', arguments: '{"zone":"UTC"}' } },
    { id: 'call_1', type: 'function', function: { name: 'x', arguments: '{}' } },
  ]);
  assert.equal(round.usage, undefined);
});

test('capped leaves short text alone and marks a cut', () => {
  assert.equal(capped('abc', 3), 'abc');
  assert.equal(capped('abcdef', 3), 'abc\n[truncated: 3 of 6 characters shown]');
});

test('ToolOffer converts MCP tools once per tool list and rebuilds for a new list, even under the same names', () => {
  const infos = [
    { name: 't', description: 'd', inputSchema: { type: 'object', properties: { a: { type: 'string' } } }, params: ['a'], server: 's' },
  ];
  const offer = new ToolOffer();
  const first = offer.functionsFor(infos);
  assert.deepEqual(first, [toFunctionTool(infos[0])]);
  assert.equal(offer.functionsFor(infos), first);
  const firstLength = offer.jsonLength;
  // A restarted server (or list_changed): same server and name, new schema and description.
  const restarted = [
    { ...infos[0], description: 'new d', inputSchema: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } } } },
  ];
  const second = offer.functionsFor(restarted);
  assert.deepEqual(second, [toFunctionTool(restarted[0])]);
  assert.equal(second[0].function.description, 'new d');
  assert.ok(offer.jsonLength > firstLength);
  assert.equal(offer.functionsFor(restarted), second);
  assert.deepEqual(toFunctionTool({ ...infos[0], inputSchema: {} }).function.parameters, { type: 'object', properties: {} });
});

test('ThinkFilter: a </think> before any visible text ends reasoning the prompt opened (R1/QwQ templates), split anywhere', () => {
  const source = '\nReasoning the prompt opened.</think>\n\nThe answer <b>.';
  for (let cut = 0; cut <= source.length; cut++) {
    const filter = new ThinkFilter(true);
    const out = filter.push(source.slice(0, cut)) + filter.push(source.slice(cut)) + filter.end();
    assert.equal(out, '\n\nThe answer <b>.', `cut at ${cut}`);
    assert.equal(filter.sawBareClose, true);
    assert.equal(filter.reasoningChars, '\nReasoning the prompt opened.'.length);
  }
  // Without knowing the model, only what has not been shown yet can be dropped.
  const unknown = new ThinkFilter();
  assert.equal(unknown.push('\n'), '\n');
  assert.equal(unknown.push('</th'), '');
  assert.equal(unknown.push('ink>Answer'), 'Answer');
  assert.equal(unknown.sawBareClose, true);
  assert.equal(new ThinkFilter().push(' Reasoning.</think>Answer'), 'Answer');
  const late = new ThinkFilter();
  assert.equal(late.push('Answer first. '), 'Answer first. ');
  assert.equal(late.push('More</think> end'), 'More end'); // shown text stays; the stray tag goes
  // A model known to open reasoning in the prompt that answers without any: shown at the end.
  const plain = new ThinkFilter(true);
  assert.equal(plain.push('No reasoning '), '');
  assert.equal(plain.push('this time.'), '');
  assert.equal(plain.end(), 'No reasoning this time.');
  // An explicit <think> first decides it too: the text before it is answer text.
  const explicit = new ThinkFilter(true);
  assert.equal(explicit.push('Hi <think>x</think> there'), 'Hi  there');
});

test('StreamAssembler: an error chunk inside the stream fails the call with 502 upstream_error and its message', () => {
  const seen: string[] = [];
  const a = new StreamAssembler((t) => seen.push(t), { modelId: 'm' });
  a.push(chunk({ content: 'Partial <thi' }));
  assert.throws(
    () => a.push(JSON.stringify({ error: { object: 'error', message: 'CUDA out of memory', type: 'InternalServerError', code: 500 } })),
    {
      status: 502,
      code: 'upstream_error',
      message: 'The upstream for model "m" failed: it sent an error in the stream: CUDA out of memory.',
    },
  );
  // What the failed call held back is not shown, only counted.
  const partial = a.abandon();
  assert.deepEqual(seen, ['Partial ']);
  assert.equal(partial.producedChars, 'Partial <thi'.length);
  assert.throws(() => new StreamAssembler(() => {}, { modelId: 'm' }).push('{"error":"overloaded"}'), {
    message: 'The upstream for model "m" failed: it sent an error in the stream: overloaded.',
  });
});

test('StreamAssembler: content and tool arguments past maxChars fail the call instead of growing without bound', () => {
  const args = new StreamAssembler(() => {}, { modelId: 'm', maxChars: 100 });
  args.push(chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'one', arguments: 'x'.repeat(60) } }] }));
  assert.throws(() => args.push(chunk({ tool_calls: [{ index: 0, function: { arguments: 'x'.repeat(60) } }] })), {
    status: 502,
    code: 'upstream_error',
    message: 'The upstream for model "m" failed: response too large (over 100 characters of content and tool arguments).',
  });
  const whole = new StreamAssembler(() => {}, { modelId: 'm', maxChars: 100 });
  assert.throws(() => whole.push(chunk({ tool_calls: [{ function: { name: 'one', arguments: { big: 'y'.repeat(100) } } }] })), {
    code: 'upstream_error',
  });
  const text = new StreamAssembler(() => {}, { modelId: 'm', maxChars: 100 });
  text.push(chunk({ content: 'z'.repeat(100) }));
  assert.throws(() => text.push(chunk({ content: 'z' })), { code: 'upstream_error' });
});

test('StreamAssembler: a new id with a name at an index in use is another call; a repeated id is the same call', () => {
  // SGLang of early 2025 numbered every parallel call 0 and repeated the id on each piece (InternLM/lmdeploy#3412).
  const a = new StreamAssembler(() => {}, { modelId: 'm' });
  const call = (id: string, fn: Record<string, unknown>) => chunk({ tool_calls: [{ id, index: 0, type: 'function', function: fn }] });
  a.push(call('0', { name: 'get_time', arguments: '' }));
  a.push(call('0', { name: null, arguments: '{"timezone": "Asia/Tokyo"}' }));
  a.push(call('1', { name: 'get_time', arguments: '' }));
  a.push(call('1', { name: null, arguments: '{"timezone": "UTC"}' }));
  assert.equal(a.endedWith, undefined);
  a.push(chunk({}, 'tool_calls'));
  assert.equal(a.endedWith, 'tool_calls');
  assert.deepEqual(
    a.finish().toolCalls.map((c) => [c.id, c.function.name, c.function.arguments]),
    [
      ['0', 'get_time', '{"timezone": "Asia/Tokyo"}'],
      ['1', 'get_time', '{"timezone": "UTC"}'],
    ],
  );
});

test('StreamAssembler: a whole JSON completion (message, calls, usage); a body that is no completion is a 502 another deployment may answer', async () => {
  const { UpstreamFailure } = await import('../../../gateway/chat/upstream-errors.js');
  const seen: string[] = [];
  const assembler = new StreamAssembler((t) => seen.push(t), { modelId: 'm' });
  assembler.pushCompletion(
    JSON.stringify({
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            reasoning_content: 'I need the time.',
            tool_calls: [
              { id: 'call_a1b2c3d4', type: 'function', function: { name: 'get_time', arguments: '{"timezone":"Europe/Paris"}' } },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
    }),
  );
  const round = assembler.finish();
  assert.deepEqual(seen, []);
  assert.equal(round.finishReason, 'tool_calls');
  assert.deepEqual(round.usage, { prompt_tokens: 12, completion_tokens: 5 });
  assert.deepEqual(round.toolCalls, [
    { id: 'call_a1b2c3d4', type: 'function', function: { name: 'get_time', arguments: '{"timezone":"Europe/Paris"}' } },
  ]);
  for (const body of ['<html>502 Bad Gateway</html>', '{"object":"list","data":[]}', '[]', '']) {
    assert.throws(
      () => new StreamAssembler(() => {}, { modelId: 'm' }).pushCompletion(body),
      (err: unknown) => err instanceof UpstreamFailure && err.kind === 'broken' && /not a chat completion/.test(err.message),
      body,
    );
  }
  // An error body with status 200 is the upstream's error, with its message.
  assert.throws(
    () => new StreamAssembler(() => {}, { modelId: 'm' }).pushCompletion('{"error":{"message":"out of memory"}}'),
    /out of memory/,
  );
});
