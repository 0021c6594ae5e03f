import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/upstream/scripted-upstream.js';
import { apiKeyFor, type TestGateway } from '../../helpers/gateway.js';
import { openaiFor, postChat, startChatGateway, traceOf } from './chat-harness.js';

let upstream: ScriptedUpstream;
let gateway: TestGateway;
let key: string;
before(async () => {
  upstream = await startScriptedUpstream();
  gateway = await startChatGateway({ upstream });
  key = await apiKeyFor(gateway);
});
after(async () => {
  await gateway?.stop();
  await upstream?.close();
});
beforeEach(() => upstream.reset());

const ask = (content = 'What is up?') => ({ model: 'conductor', messages: [{ role: 'user' as const, content }] });

test('a 3-round plan: tools run, results feed back, the answer joins every round and the trace tells the story', async () => {
  upstream.script(
    { text: 'Let me look.', toolCalls: [{ name: 'echo', arguments: '{"text":"alpha"}' }] },
    { toolCalls: [{ name: 'sleep', arguments: '{"ms":5}' }], toolCallStyle: 'whole' },
    { toolCalls: [{ name: 'echo', arguments: '{"text":"gamma"}', id: 'call_g' }] },
    { text: ['The ', 'answer.'], usage: { prompt_tokens: 400, completion_tokens: 30 } },
  );
  const completion = await openaiFor(gateway, key).chat.completions.create(ask());
  assert.match(completion.id, /^chatcmpl-\d+$/);
  assert.equal(completion.object, 'chat.completion');
  assert.equal(completion.model, 'svc-32b-conductor');
  assert.equal(completion.choices.length, 1);
  assert.deepEqual(completion.choices[0].message.role, 'assistant');
  assert.equal(completion.choices[0].message.content, 'Let me look.\n\nThe answer.');
  assert.equal(completion.choices[0].finish_reason, 'stop');
  assert.deepEqual(completion.usage, { prompt_tokens: 550, completion_tokens: 60, total_tokens: 610 });
  const trace = traceOf(completion);
  assert.deepEqual(
    trace.map((t) => [t.round, t.tool, t.arguments, t.ok]),
    [
      [1, 'echo', { text: 'alpha' }, true],
      [2, 'sleep', { ms: 5 }, true],
      [3, 'echo', { text: 'gamma' }, true],
    ],
  );
  for (const t of trace) assert.ok(Number.isInteger(t.duration_ms) && t.duration_ms >= 0);

  assert.equal(upstream.requests.length, 4);
  const first = upstream.requests[0].body;
  assert.equal(first.model, 'qwen3:32b');
  // Nothing reaches a collecting client before the end: every call asks for one JSON answer, and
  // sends no stream_options (vLLM refuses them without streaming). Usage comes from the bodies.
  for (const { body } of upstream.requests) {
    assert.equal(body.stream, false);
    assert.equal(body.stream_options, undefined);
  }
  assert.equal(first.tool_choice, 'auto');
  assert.equal(first.max_tokens, 2048);
  assert.equal(first.messages[0].role, 'system');
  assert.ok(first.messages[0].content!.includes(`Today is ${new Date().toISOString().slice(0, 10)}.`));
  assert.deepEqual(first.messages[1], { role: 'user', content: 'What is up?' });
  const echo = first.tools!.find((t) => t.function.name === 'echo')!;
  assert.equal(echo.type, 'function');
  assert.equal(echo.function.description, 'Echo the text back.');
  assert.deepEqual((echo.function.parameters as { required: string[] }).required, ['text']);
  assert.ok(first.tools!.some((t) => t.function.name === 'quick_sleep'));

  const last = upstream.requests[3].body.messages;
  assert.deepEqual(
    last.slice(2).map((m) => m.role),
    ['assistant', 'tool', 'assistant', 'tool', 'assistant', 'tool'],
  );
  assert.equal(last[2].content, 'Let me look.');
  // The upstream's ids were short (call_0, call_g) and repeated across rounds: each got a fresh one.
  const ids = [2, 4, 6].map((i) => (last[i].tool_calls as Array<{ id: string }>)[0].id);
  for (const id of ids) assert.match(id, /^call_[A-Za-z0-9]{24}$/);
  assert.equal(new Set(ids).size, 3);
  assert.deepEqual(last[2].tool_calls, [{ id: ids[0], type: 'function', function: { name: 'echo', arguments: '{"text":"alpha"}' } }]);
  assert.deepEqual(last[3], { role: 'tool', tool_call_id: ids[0], content: '{"text":"alpha"}' });
  assert.deepEqual(last[5], { role: 'tool', tool_call_id: ids[1], content: '{"slept":5}' });
  assert.deepEqual(last[7], { role: 'tool', tool_call_id: ids[2], content: '{"text":"gamma"}' });

  const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
  assert.match(metrics, /switchyard_chat_tool_rounds_bucket\{le="3",model="svc-32b-conductor"\} [1-9]/);
  assert.match(metrics, /switchyard_chat_tokens_total\{model="svc-32b-conductor",kind="completion"\} [1-9]/);
});

test('the calls of one round run concurrently', async () => {
  upstream.script(
    {
      toolCalls: [
        { name: 'sleep', arguments: '{"ms":800,"tag":"a"}' },
        { name: 'sleep', arguments: '{"ms":800,"tag":"b"}' },
        { name: 'sleep', arguments: '{"ms":800,"tag":"c"}' },
      ],
    },
    { text: 'Slept.' },
  );
  const started = performance.now();
  const completion = await openaiFor(gateway, key).chat.completions.create(ask());
  const elapsed = performance.now() - started;
  const trace = traceOf(completion);
  assert.equal(trace.length, 3);
  for (const t of trace) {
    assert.equal(t.ok, true);
    assert.ok(t.duration_ms >= 750, `each call slept, got ${t.duration_ms}`);
  }
  // One after another would take 2400 ms or more.
  assert.ok(elapsed < 1900, `three 800 ms calls took ${Math.round(elapsed)} ms in total`);
});

test('after 8 tool rounds one last call goes out with tool_choice "none" and its tool calls are not run', async () => {
  for (let i = 0; i < 8; i++) upstream.script({ toolCalls: [{ name: 'echo', arguments: `{"text":"r${i + 1}"}` }] });
  upstream.script({ text: 'Final.', toolCalls: [{ name: 'echo', arguments: '{"text":"ignored"}' }] });
  const completion = await openaiFor(gateway, key).chat.completions.create(ask());
  assert.equal(completion.choices[0].message.content, 'Final.');
  assert.equal(completion.choices[0].finish_reason, 'stop');
  const trace = traceOf(completion);
  assert.deepEqual(
    trace.map((t) => t.round),
    [1, 2, 3, 4, 5, 6, 7, 8],
  );
  assert.equal(upstream.requests.length, 9);
  assert.deepEqual(
    upstream.requests.map((r) => r.body.tool_choice),
    ['auto', 'auto', 'auto', 'auto', 'auto', 'auto', 'auto', 'auto', 'none'],
  );
});

test('a failing tool, a timing-out tool, malformed arguments and an unknown tool become messages the model reads', async () => {
  upstream.script(
    {
      toolCalls: [
        { name: 'echo_fail', arguments: '{"code":"not_found","message":"no such block"}' },
        { name: 'quick_sleep', arguments: '{"ms":5000}' },
        { name: 'echo', arguments: '{"text": ' },
        { name: 'no_such_tool', arguments: '{}' },
      ],
    },
    { text: 'Some tools failed.' },
  );
  const completion = await openaiFor(gateway, key).chat.completions.create(ask());
  assert.equal(completion.choices[0].message.content, 'Some tools failed.');
  const trace = traceOf(completion);
  assert.deepEqual(
    trace.map((t) => [t.tool, t.ok, t.error?.code]),
    [
      ['echo_fail', false, 'not_found'],
      ['quick_sleep', false, 'tool_timeout'],
      ['echo', false, 'invalid_arguments_json'],
      ['no_such_tool', false, 'tool_not_found'],
    ],
  );
  assert.equal(trace[0].error!.message, 'no such block');
  assert.equal(trace[1].error!.message, 'Tool "quick_sleep" did not answer within 300 ms.');
  assert.equal(trace[2].arguments, '{"text": ');
  assert.equal(trace[2].error!.message, 'The arguments for echo are not a JSON object: {"text": ');
  const toolMessages = upstream.requests[1].body.messages.filter((m) => m.role === 'tool');
  assert.equal(toolMessages.length, 4);
  assert.deepEqual(JSON.parse(toolMessages[1].content!), {
    error: { code: 'tool_timeout', message: 'Tool "quick_sleep" did not answer within 300 ms.' },
  });
  assert.deepEqual(JSON.parse(toolMessages[2].content!).error.code, 'invalid_arguments_json');
  assert.deepEqual(JSON.parse(toolMessages[3].content!).error.code, 'tool_not_found');
});

test('reasoning never reaches the content: reasoning_content and <think> split across chunks', async () => {
  upstream.script({
    reasoning: ['I should ', 'add.'],
    text: ['<thi', 'nk>secret pl', 'an</th', 'ink>\n\nThe answer', ' is 4 <', 'b>.'],
  });
  const completion = await openaiFor(gateway, key).chat.completions.create(ask('2+2?'));
  assert.equal(completion.choices[0].message.content, 'The answer is 4 <b>.');
});

test('a large tool result is cut at toolResultMaxChars with a visible marker', async () => {
  const text = 'x'.repeat(20_000);
  upstream.script({ toolCalls: [{ name: 'echo', arguments: JSON.stringify({ text }) }] }, { text: 'Long.' });
  await openaiFor(gateway, key).chat.completions.create(ask());
  const toolMessage = upstream.requests[1].body.messages.find((m) => m.role === 'tool')!;
  const full = JSON.stringify({ text });
  assert.equal(toolMessage.content, `${full.slice(0, 16_000)}\n[truncated: 16000 of ${full.length} characters shown]`);
});

test('tool_choice "none" offers no tools; max_tokens is bounded by the model and passed on', async () => {
  upstream.script({ text: 'Plain.' });
  const completion = await openaiFor(gateway, key).chat.completions.create({
    ...ask(),
    tool_choice: 'none',
    max_tokens: 77,
    temperature: 0.2,
    // @ts-expect-error an unknown field, as clients send: ignored
    frobnicate: true,
  });
  assert.equal(completion.choices[0].message.content, 'Plain.');
  const body = upstream.requests[0].body;
  assert.equal(body.tools, undefined);
  assert.equal(body.tool_choice, undefined);
  assert.equal(body.max_tokens, 77);
  assert.equal(body.temperature, 0.2);
  assert.equal(body.frobnicate, undefined);
});

test('an upstream that reports no usage: tokens are estimated as ceil(characters / 4) and the log says so', async () => {
  upstream.script({ text: 'abcdefghij', usage: null });
  const completion = await openaiFor(gateway, key).chat.completions.create({ ...ask(), tool_choice: 'none' });
  assert.equal(completion.usage!.completion_tokens, 3);
  assert.ok(completion.usage!.prompt_tokens > 0);
  assert.ok(gateway.logs.some((l) => l.msg === 'upstream reported no usage: tokens estimated as ceil(characters / 4)'));
});

test('requests the gateway refuses: non-function tools, legacy functions, n > 1, bad temperature, empty messages, bad role, unpaired tool messages, unknown model', async () => {
  const call = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } };
  const cases: Array<[unknown, number, string, string | null, string?]> = [
    [
      { messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'custom', custom: { name: 'mine' } }] },
      400,
      'invalid_request',
      'tools.0.type',
    ],
    [{ messages: [{ role: 'user', content: 'hi' }], functions: [{ name: 'mine' }] }, 400, 'unsupported_parameter', 'functions'],
    [
      { messages: [{ role: 'user', content: 'hi' }], n: 2 },
      400,
      'unsupported_parameter',
      'n',
      'n must be 1: the gateway returns one choice.',
    ],
    [{ messages: [{ role: 'user', content: 'hi' }], temperature: 2.5 }, 400, 'invalid_request', 'temperature'],
    [{ messages: [] }, 400, 'invalid_request', 'messages', 'Invalid request: messages: messages must hold at least one message'],
    [{}, 400, 'invalid_request', 'messages'],
    [{ messages: [{ role: 'robot', content: 'hi' }] }, 400, 'invalid_request', 'messages.0.role'],
    [{ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }] }, 400, 'invalid_request', 'messages.0.content'],
    [{ messages: [{ role: 'user', content: 'hi' }], tool_choice: 'required' }, 400, 'unsupported_parameter', 'tool_choice'],
    // A result of no call, and a call left without its result: the model must see each with the other.
    [
      {
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'tool', tool_call_id: 'call_9', content: '42' },
        ],
      },
      400,
      'invalid_request',
      'messages.1.tool_call_id',
      `Invalid parameter: messages with role 'tool' must answer a call of an earlier assistant message's 'tool_calls'; no call has the id "call_9".`,
    ],
    [
      {
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'user', content: 'and?' },
        ],
      },
      400,
      'invalid_request',
      'messages.1.tool_calls',
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1",
    ],
    [{ model: 'gpt-9', messages: [{ role: 'user', content: 'hi' }] }, 404, 'model_not_found', 'model', 'The model "gpt-9" does not exist.'],
  ];
  for (const [body, status, code, param, message] of cases) {
    const res = await postChat(gateway, body);
    assert.equal(res.status, status, JSON.stringify(body));
    assert.equal(res.body.error.code, code, JSON.stringify(body));
    assert.equal(res.body.error.param, param, JSON.stringify(body));
    if (message) assert.equal(res.body.error.message, message);
  }
  assert.equal(upstream.requests.length, 0);
});

test('the canonical id and text-part content are accepted; the model field defaults to conductor', async () => {
  upstream.script({ text: 'one' }, { text: 'two' });
  const a = await postChat(gateway, {
    model: 'svc-8b-operator',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'hi' },
          { type: 'text', text: ' there' },
        ],
      },
    ],
  });
  assert.equal(a.status, 200);
  assert.equal(a.body.model, 'svc-8b-operator');
  assert.equal(upstream.requests[0].body.model, 'qwen3:8b');
  assert.deepEqual(upstream.requests[0].body.messages[1], { role: 'user', content: 'hi there' });
  const b = await postChat(gateway, { messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(b.body.model, 'svc-32b-conductor');
  assert.equal(b.headers.get('x-credits-charged'), null); // free mode
});

test('upstream errors: a 4xx is a 400 with its message, a slow upstream is a 504, a 5xx is retried', async () => {
  upstream.script({ status: 400, body: { error: { message: "This model's maximum context length is 8192 tokens." } } });
  const rejected = await postChat(gateway, ask());
  assert.equal(rejected.status, 400);
  assert.equal(rejected.body.error.code, 'upstream_invalid_request');
  assert.equal(
    rejected.body.error.message,
    'The upstream for model "svc-32b-conductor" rejected the request (HTTP 400): This model\'s maximum context length is 8192 tokens.',
  );

  upstream.script({ delayMs: 2000 });
  const slow = await postChat(gateway, { ...ask(), model: 'operator' });
  assert.equal(slow.status, 504, JSON.stringify(slow.body));
  assert.equal(slow.body.error.code, 'upstream_timeout');
  assert.equal(slow.body.error.message, 'The upstream for model "svc-8b-operator" did not answer within 600 ms.');

  upstream.reset();
  upstream.script({ status: 503 }, { status: 429 }, { text: 'Third time lucky.' });
  const retried = await postChat(gateway, { ...ask(), tool_choice: 'none' });
  assert.equal(retried.status, 200);
  assert.equal(retried.body.choices[0].message.content, 'Third time lucky.');
  assert.equal(upstream.requests.length, 3);

  upstream.reset();
  upstream.script({ status: 500 }, { status: 500 }, { status: 500, body: { error: { message: 'engine crashed' } } });
  const broken = await postChat(gateway, { ...ask(), tool_choice: 'none' });
  assert.equal(broken.status, 502);
  assert.equal(broken.body.error.code, 'upstream_error');
  assert.equal(broken.body.error.message, 'The upstream for model "svc-32b-conductor" failed: HTTP 500: engine crashed.');
});

test('an upstream that ignores stream: true and answers one JSON completion still works', async () => {
  upstream.script({ json: true, text: '<think>x</think>Whole answer.', usage: { prompt_tokens: 9, completion_tokens: 4 } });
  const completion = await openaiFor(gateway, key).chat.completions.create({ ...ask(), tool_choice: 'none' });
  assert.equal(completion.choices[0].message.content, 'Whole answer.');
  assert.deepEqual(completion.usage, { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 });
});

test('/health lists each model as up', async () => {
  const health = (await (await fetch(`${gateway.url}/health`)).json()) as Record<string, unknown>;
  assert.equal(health.status, 'ok');
  const up = [{ name: 'default', state: 'up', outstanding: 0 }];
  assert.deepEqual(health.models, [
    { id: 'svc-32b-conductor', upstream: 'up', deployments: up },
    { id: 'svc-8b-operator', upstream: 'up', deployments: up },
  ]);
});

test("a 'developer' message (OpenAI's newer name for system instructions) reaches the upstream as system", async () => {
  upstream.script({ text: 'Ahoy.' });
  const completion = await openaiFor(gateway, key).chat.completions.create({
    model: 'conductor',
    messages: [
      { role: 'developer', content: [{ type: 'text', text: 'Answer like a pirate.' }] },
      { role: 'user', content: 'Hello?' },
    ],
  });
  assert.equal(completion.choices[0].message.content, 'Ahoy.');
  const sent = upstream.requests[0].body.messages;
  assert.deepEqual(sent.slice(-2), [
    { role: 'system', content: 'Answer like a pirate.' },
    { role: 'user', content: 'Hello?' },
  ]);
});
