/**
 * Issue 17: the whole chat loop through what real inference servers send. Each scenario replays
 * recorded responses (test/fixtures/upstreams/, every one naming its source) in front of the real
 * gateway with the built utility tool server: streamed (the `.sse` recordings, cut at awkward byte
 * boundaries) and collected (issue 39: the gateway asks for JSON, `stream: false`, so the `.json`
 * recordings, the same servers' non-streamed answers). It checks the tools that ran with their
 * arguments, the answer without reasoning, the usage summed or estimated, the error a broken
 * answer becomes, and that each upstream call asked for the kind of answer it got. The same
 * scenarios run through `/v1/messages` too (issue 41): collected with the official
 * `@anthropic-ai/sdk`, and streamed as the Messages API's raw events.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { apiKeyFor, startTestGateway, walletHeaders, WALLET, type TestGateway } from '../../helpers/gateway.js';
import { runnableEnv } from '../tools/fixture-servers.js';
import {
  cutPoints,
  loadRecording,
  startReplayUpstream,
  type ReplayUpstream,
  type Split,
} from '../../fixtures/upstreams/replay-upstream.js';
import { traceOf, type TraceEntry } from './chat-harness.js';

interface Scenario {
  name: string;
  /** The streamed recordings the upstream answers a streaming client's calls with, one per call. */
  play?: string[];
  /** The non-streamed (JSON) recordings it answers a collecting client's calls with. */
  json?: string[];
  /** The first reply's tool calls, in order: the id the server gave and the time zone asked for. */
  calls?: Array<{ id: string; timezone: string }>;
  answer?: string;
  /** The sum of the recordings' usage, or the estimate when some recording has none. */
  usage?: { prompt_tokens: number; completion_tokens: number } | { estimatedCompletion: number };
  /** The JSON recordings' usage, where it differs (a non-streamed answer always carries usage). */
  jsonUsage?: { prompt_tokens: number; completion_tokens: number };
  /** The error the chat ends with: status, code, and a part of the message. */
  error?: { status: number; code: string; message: string };
  /** Run against a model the gateway has not seen yet in this mode (what it learns is per model). */
  freshModel?: true;
  /** The streamed answer, where it differs from `answer` (documented: see the scenario). */
  streamedAnswer?: string;
}

const PARIS = 'Il est 14 h 05 à Paris.';
const TOKYO_NY = (first: string, second: string) => [
  { id: first, timezone: 'Asia/Tokyo' },
  { id: second, timezone: 'America/New_York' },
];
const upstreamError = (message: string) => ({ status: 502, code: 'upstream_error', message });

const scenarios: Scenario[] = [
  {
    name: 'vLLM hermes: plain answer, usage',
    play: ['vllm-hermes/answer.sse'],
    json: ['vllm-hermes/answer.json'],
    answer: 'Il est 14 h 05 à Paris ☕ 🕑.',
    usage: { prompt_tokens: 412, completion_tokens: 13 },
  },
  {
    name: 'vLLM hermes: one tool call, then the answer',
    play: ['vllm-hermes/tool-call.sse', 'vllm-hermes/answer.sse'],
    json: ['vllm-hermes/tool-call.json', 'vllm-hermes/answer.json'],
    calls: [{ id: 'chatcmpl-tool-ca0a10ac646744be850c62b1301ff39b', timezone: 'Europe/Paris' }],
    answer: 'Il est 14 h 05 à Paris ☕ 🕑.',
    usage: { prompt_tokens: 398 + 412, completion_tokens: 22 + 13 },
  },
  {
    name: 'vLLM hermes: two parallel calls with "\\n" content between them',
    play: ['vllm-hermes/two-tool-calls.sse', 'vllm-hermes/answer.sse'],
    json: ['vllm-hermes/two-tool-calls.json', 'vllm-hermes/answer.json'],
    calls: TOKYO_NY('chatcmpl-tool-1d6e3a9f0b7c48e2a5d4c3b2a1f0e9d8', 'chatcmpl-tool-7a8b9c0d1e2f43a4b5c6d7e8f9a0b1c2'),
    answer: 'Il est 14 h 05 à Paris ☕ 🕑.',
    usage: { prompt_tokens: 401 + 412, completion_tokens: 40 + 13 },
  },
  {
    name: 'vLLM hermes without a reasoning parser: <think> blocks in the content, a call, the answer',
    play: ['vllm-hermes/think-in-content-tool-call.sse', 'vllm-hermes/think-in-content-answer.sse'],
    json: ['vllm-hermes/think-in-content-tool-call.json', 'vllm-hermes/think-in-content-answer.json'],
    calls: [{ id: 'chatcmpl-tool-b1d3f5a7c9e04b2d6f8a0c2e4a6c8e0b', timezone: 'Europe/Paris' }],
    answer: PARIS,
    usage: { prompt_tokens: 430 + 532, completion_tokens: 48 + 28 },
  },
  {
    // README: a template that opens <think> in the prompt (QwQ, R1) makes the model write only
    // </think>; reasoning already streamed before it cannot be taken back, so the first streamed
    // reply of such a model shows it, and its later calls are held until the reasoning ends. A
    // collected answer shows nothing early, so it holds every call and drops it all.
    name: 'vLLM hermes without a reasoning parser, QwQ: reasoning closed by a bare </think>, a call, the answer',
    play: ['vllm-hermes/bare-think-close-tool-call.sse', 'vllm-hermes/bare-think-close-answer.sse'],
    json: ['vllm-hermes/bare-think-close-tool-call.json', 'vllm-hermes/bare-think-close-answer.json'],
    calls: [{ id: 'chatcmpl-tool-c2e4a6b8d0f24c6e8a0c2e4b6d8f0a13', timezone: 'Europe/Paris' }],
    answer: PARIS,
    streamedAnswer: `Okay, the user asks for the time in Paris.\n\n\n\n\n${PARIS}`,
    usage: { prompt_tokens: 441 + 512, completion_tokens: 29 + 18 },
    freshModel: true,
  },
  {
    name: 'vLLM hermes: an error inside the stream',
    play: ['vllm-hermes/stream-error.sse'],
    error: upstreamError('it sent an error in the stream: EngineCore encountered an issue.'),
  },
  {
    name: 'vLLM with --reasoning-parser qwen3: reasoning, a call, reasoning, the answer',
    play: ['vllm-qwen3-reasoning/reasoning-tool-call.sse', 'vllm-qwen3-reasoning/reasoning-answer.sse'],
    json: ['vllm-qwen3-reasoning/reasoning-tool-call.json', 'vllm-qwen3-reasoning/reasoning-answer.json'],
    calls: [{ id: 'chatcmpl-tool-5e4d3c2b1a0f49e8d7c6b5a4f3e2d1c0', timezone: 'Europe/Paris' }],
    answer: PARIS,
    usage: { prompt_tokens: 455 + 560, completion_tokens: 48 + 26 },
  },
  {
    name: 'vLLM pythonic parser: two calls, the first with arguments in its name delta',
    play: ['vllm-pythonic/two-tool-calls.sse', 'vllm-hermes/answer.sse'],
    json: ['vllm-pythonic/two-tool-calls.json', 'vllm-hermes/answer.json'],
    calls: TOKYO_NY('chatcmpl-tool-9c8b7a6f5e4d43c2b1a0f9e8d7c6b5a4', 'chatcmpl-tool-3a2b1c0d9e8f47a6b5c4d3e2f1a0b9c8'),
    answer: 'Il est 14 h 05 à Paris ☕ 🕑.',
    usage: { prompt_tokens: 388 + 412, completion_tokens: 33 + 13 },
  },
  {
    name: 'SGLang: reasoning, one call (nulls everywhere), the answer',
    play: ['sglang/tool-call.sse', 'sglang/answer.sse'],
    json: ['sglang/tool-call.json', 'sglang/answer.json'],
    calls: [{ id: 'call_5b1c9e0a7d2f4e8c9b3a6d1e', timezone: 'Europe/Paris' }],
    answer: PARIS,
    usage: { prompt_tokens: 470 + 540, completion_tokens: 31 + 31 },
  },
  {
    name: 'SGLang: two parallel calls',
    play: ['sglang/two-tool-calls.sse', 'sglang/answer.sse'],
    json: ['sglang/two-tool-calls.json', 'sglang/answer.json'],
    calls: TOKYO_NY('call_2e4a6c8e0b1d4f3a5c7e9b1d', 'call_9f7d5b3a1c8e4d6b2a0f8e6c'),
    answer: PARIS,
    usage: { prompt_tokens: 482 + 540, completion_tokens: 48 + 31 },
  },
  {
    name: 'SGLang (early 2025): two calls both numbered 0, told apart by id',
    play: ['sglang/two-tool-calls-same-index.sse', 'sglang/answer.sse'],
    calls: TOKYO_NY('0', '1'),
    answer: PARIS,
    usage: { prompt_tokens: 482 + 540, completion_tokens: 48 + 31 },
  },
  {
    name: 'SGLang: an error inside the stream',
    play: ['sglang/stream-error.sse'],
    error: upstreamError('it sent an error in the stream: The request was aborted: out of KV cache memory.'),
  },
  {
    name: 'SGLang: a graceful abort ends the stream normally with finish_reason "abort"',
    play: ['sglang/abort.sse'],
    json: ['sglang/abort.json'],
    error: upstreamError('it aborted the generation (finish_reason "abort")'),
  },
  {
    name: 'llama.cpp --jinja (a real capture): one call, no usage anywhere',
    play: ['llamacpp/tool-call-no-usage.sse', 'llamacpp/answer-no-usage.sse'],
    json: ['llamacpp/tool-call.json', 'llamacpp/answer.json'],
    calls: [{ id: 'v2dhQk7s1Lr9Tz3Xb6Nm0Pa4Wc8Ye5Ju', timezone: 'Europe/Paris' }],
    answer: PARIS,
    // ceil(("get_time" + '{"timezone":"Europe/Paris"}') / 4) + ceil(PARIS / 4) = 9 + 6
    usage: { estimatedCompletion: 15 },
    jsonUsage: { prompt_tokens: 402 + 524, completion_tokens: 19 + 9 },
  },
  {
    name: 'llama.cpp --jinja: two calls (parallel_tool_calls asked for), reasoning_content, usage',
    play: ['llamacpp/two-tool-calls.sse', 'llamacpp/reasoning-answer-usage.sse'],
    json: ['llamacpp/two-tool-calls.json', 'llamacpp/reasoning-answer.json'],
    calls: TOKYO_NY('Xb4Nc8Vd2Mf6Lg0Kh3Jj7Hk1Gl5Fm9Dn', 'Pq2Rs6Tu0Vw4Xy8Za3Bc7De1Fg5Hi9Jk'),
    answer: PARIS,
    usage: { prompt_tokens: 498 + 512, completion_tokens: 44 + 27 },
  },
  {
    name: 'llama.cpp: a prompt too long for the context, refused with 400 before any answer',
    json: ['llamacpp/error-context-size.json'],
    error: {
      status: 400,
      code: 'upstream_invalid_request',
      message: 'rejected the request (HTTP 400): the request exceeds the available context size, try increasing it',
    },
  },
  {
    name: 'llama.cpp: an error as a data event, no [DONE]',
    play: ['llamacpp/stream-error-data.sse'],
    error: upstreamError('it sent an error in the stream: the request exceeds the available context size, try increasing it'),
  },
  {
    name: 'llama.cpp (older server.cpp): an error as an `error:` SSE field, then [DONE]',
    play: ['llamacpp/stream-error-field.sse'],
    error: upstreamError('it sent an error in the stream: the request exceeds the available context size, try increasing it'),
  },
  {
    name: 'Ollama: reasoning, one whole call, usage in its own chunk',
    play: ['ollama/reasoning-tool-call-usage.sse', 'ollama/answer-usage.sse'],
    json: ['ollama/reasoning-tool-call.json', 'ollama/answer.json'],
    calls: [{ id: 'call_k3x9q2ma', timezone: 'Europe/Paris' }],
    answer: PARIS,
    usage: { prompt_tokens: 402 + 468, completion_tokens: 37 + 11 },
  },
  {
    name: 'Ollama: two whole calls',
    play: ['ollama/two-tool-calls-usage.sse', 'ollama/answer-usage.sse'],
    json: ['ollama/two-tool-calls.json', 'ollama/answer.json'],
    calls: TOKYO_NY('call_7hq2m0zt', 'call_p4w8c1rn'),
    answer: PARIS,
    usage: { prompt_tokens: 410 + 468, completion_tokens: 52 + 11 },
  },
  {
    name: 'Ollama before 0.5.2: stream_options ignored, no usage',
    play: ['ollama/answer-no-usage.sse'],
    answer: PARIS,
    usage: { estimatedCompletion: 6 },
  },
  {
    name: 'Ollama: generation fails mid-stream, the stream just stops',
    play: ['ollama/stream-error-cut-off.sse'],
    error: upstreamError('the stream ended before the answer was complete'),
  },
  {
    name: 'OpenAI API: one call, usage: null on every chunk but the last',
    play: ['openai/tool-call-usage.sse', 'openai/answer-usage.sse'],
    json: ['openai/tool-call.json', 'openai/answer.json'],
    calls: [{ id: 'call_aqwOReHDKPnqiF7NbRxzDTY1', timezone: 'Europe/Paris' }],
    answer: PARIS,
    usage: { prompt_tokens: 395 + 380, completion_tokens: 17 + 9 },
  },
  {
    name: 'OpenAI API: two parallel calls',
    play: ['openai/two-tool-calls-usage.sse', 'openai/answer-usage.sse'],
    json: ['openai/two-tool-calls.json', 'openai/answer.json'],
    calls: TOKYO_NY('call_DdmO9pD3xa9XTPNJ32zg2hcA', 'call_Xw5Yt2Ur9Qp6On3Ml0Kj7Ih4'),
    answer: PARIS,
    usage: { prompt_tokens: 402 + 380, completion_tokens: 46 + 9 },
  },
  {
    // A 500 is tried again (three attempts on a model's only deployment), then relayed as 502.
    name: 'OpenAI API: a server error, three times',
    json: ['openai/server-error.json', 'openai/server-error.json', 'openai/server-error.json'],
    error: upstreamError('HTTP 500: The server had an error while processing your request.'),
  },
  {
    name: 'OpenAI API: an error inside the stream',
    play: ['openai/stream-error.sse'],
    error: upstreamError('it sent an error in the stream: The server had an error while processing your request.'),
  },
];

/** Words of the recordings' reasoning: none may reach an answer. */
const REASONING = ['The user', 'the user', 'Okay', 'I should call', 'The tool', 'tool said', 'Paris is UTC', 'I need the', "I'll call"];

const ask = (model: string) => ({ model, messages: [{ role: 'user' as const, content: 'What time is it in Paris?' }] });
const SPLITS: Split[] = ['events', 'awkward'];

let upstream: ReplayUpstream;
let gateway: TestGateway;
let client: OpenAI;
let anthropic: Anthropic;

before(async () => {
  upstream = await startReplayUpstream();
  gateway = await startTestGateway({
    env: runnableEnv(),
    config: (json) => {
      const models = json.models as Array<Record<string, unknown> & { upstream: Record<string, unknown> }>;
      models[0].upstream.baseUrl = upstream.baseUrl;
      // One model per mode that nothing else uses, for the scenarios that need a fresh one.
      for (const split of SPLITS) {
        models.push({ id: `svc-fresh-${split}`, alias: `fresh-${split}`, upstream: { baseUrl: upstream.baseUrl, model: 'qwq' } });
      }
      // The built utility server (npm run build); get_time with a zone needs no network, and
      // every provider points at a closed local port so nothing could reach the internet.
      json.mcpServers = {
        utility: {
          command: process.execPath,
          args: ['dist/tool-servers/utility/main.js'],
          env: { OPEN_METEO_GEOCODING_BASE_URL: 'http://127.0.0.1:9', OPEN_METEO_BASE_URL: 'http://127.0.0.1:9' },
        },
      };
    },
  });
  client = new OpenAI({
    baseURL: `${gateway.url}/v1`,
    apiKey: await apiKeyFor(gateway),
    defaultHeaders: { 'x-wallet-address': WALLET },
    maxRetries: 0,
  });
  anthropic = new Anthropic({
    baseURL: gateway.url,
    apiKey: await apiKeyFor(gateway),
    defaultHeaders: { 'x-wallet-address': WALLET },
    maxRetries: 0,
  });
});

after(async () => {
  await gateway?.stop();
  await upstream?.close();
});

interface Outcome {
  status: number;
  content: string;
  trace: TraceEntry[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  error?: { code: string; message: string };
}

/** The official client, non-streaming: what a collecting caller sees. */
async function collected(model: string): Promise<Outcome> {
  try {
    const completion = await client.chat.completions.create(ask(model));
    return { status: 200, content: completion.choices[0].message.content ?? '', trace: traceOf(completion), usage: completion.usage! };
  } catch (err) {
    if (!(err instanceof OpenAI.APIError)) throw err;
    const body = err.error as { code: string; message: string };
    return { status: err.status ?? 0, content: '', trace: [], error: { code: body.code, message: body.message } };
  }
}

/** Raw SSE from the gateway, streaming with usage: what a streaming caller sees, chunk by chunk. */
async function streamed(model: string): Promise<Outcome> {
  const res = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: walletHeaders(),
    body: JSON.stringify({ ...ask(model), stream: true, stream_options: { include_usage: true } }),
  });
  if (res.status !== 200) {
    const body = (await res.json()) as { error: { code: string; message: string } };
    return { status: res.status, content: '', trace: [], error: body.error };
  }
  const data = (await res.text())
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => block.slice('data: '.length));
  assert.equal(data.at(-1), '[DONE]');
  const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as Record<string, any>);
  const outcome: Outcome = { status: 200, content: '', trace: [] };
  for (const chunk of chunks) {
    const choice = chunk.choices?.[0];
    if (typeof choice?.delta?.content === 'string') outcome.content += choice.delta.content;
    if (chunk.tool_trace) outcome.trace = chunk.tool_trace;
    if (chunk.usage) outcome.usage = chunk.usage;
    if (chunk.error) outcome.error = { code: chunk.error.code, message: chunk.error.message };
  }
  return outcome;
}

/** A Messages API answer's blocks as an outcome: the answer is the last text block (the text after the last tool round). */
function messageOutcome(blocks: Array<Record<string, any>>, usage: { input_tokens: number; output_tokens: number }): Outcome {
  const results = new Map(blocks.filter((b) => b.type === 'mcp_tool_result').map((b) => [b.tool_use_id as string, b]));
  const texts = blocks.filter((b) => b.type === 'text');
  return {
    status: 200,
    content: texts.at(-1)?.text ?? '',
    // As tool_trace lists them: the tool, its arguments, whether it ran.
    trace: blocks
      .filter((b) => b.type === 'mcp_tool_use')
      .map((b) => ({ round: 0, tool: b.name, arguments: b.input, ok: results.get(b.id)?.is_error === false, duration_ms: 0 })),
    usage: {
      prompt_tokens: usage.input_tokens,
      completion_tokens: usage.output_tokens,
      total_tokens: usage.input_tokens + usage.output_tokens,
    },
  };
}

/** The gateway's code and message out of a Messages error (`"<code>: <message>"`). */
function messageError(error: { message: string }): { code: string; message: string } {
  const at = error.message.indexOf(': ');
  return { code: error.message.slice(0, at), message: error.message.slice(at + 2) };
}

/** `POST /v1/messages` with the official Anthropic client, non-streaming. */
async function messagesCollected(model: string): Promise<Outcome> {
  try {
    const message = await anthropic.messages.create({ ...ask(model), max_tokens: 1024 });
    return messageOutcome(message.content as unknown as Array<Record<string, any>>, message.usage);
  } catch (err) {
    if (!(err instanceof Anthropic.APIError)) throw err;
    const body = err.error as { type: string; error: { type: string; message: string } };
    assert.equal(body.type, 'error');
    return { status: err.status ?? 0, content: '', trace: [], error: messageError(body.error) };
  }
}

/** `POST /v1/messages` streamed, its raw events read: the blocks rebuilt from content_block_start and the deltas. */
async function messagesStreamed(model: string): Promise<Outcome> {
  const res = await fetch(`${gateway.url}/v1/messages`, {
    method: 'POST',
    headers: walletHeaders(WALLET, { 'anthropic-version': '2023-06-01' }),
    body: JSON.stringify({ ...ask(model), max_tokens: 1024, stream: true }),
  });
  if (res.status !== 200) {
    const body = (await res.json()) as { error: { message: string } };
    return { status: res.status, content: '', trace: [], error: messageError(body.error) };
  }
  const events = (await res.text())
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      const data = JSON.parse(dataLine.slice('data: '.length)) as Record<string, any>;
      assert.equal(eventLine, `event: ${data.type}`);
      return data;
    });
  const blocks: Array<Record<string, any>> = [];
  let usage = { input_tokens: 0, output_tokens: 0 };
  for (const event of events) {
    if (event.type === 'content_block_start') blocks[event.index] = { ...event.content_block };
    if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') blocks[event.index].text += event.delta.text;
    if (event.type === 'message_delta') usage = event.usage;
    if (event.type === 'error') return { status: 200, content: '', trace: [], error: messageError(event.error) };
  }
  assert.equal(events.at(-1)?.type, 'message_stop');
  return messageOutcome(blocks, usage);
}

for (const [mode, recordings, split, run] of [
  ['collected: JSON answers, cut inside UTF-8 characters', 'json', 'events', collected],
  ['streamed, cut at awkward bytes', 'play', 'awkward', streamed],
  ['through /v1/messages, collected: JSON answers', 'json', 'events', messagesCollected],
  ['through /v1/messages, streamed, cut at awkward bytes', 'play', 'awkward', messagesStreamed],
] as const) {
  describe(`replayed upstreams, ${mode}`, () => {
    // A stream's own failures (an error event, a cut-off, one index for two calls) have no JSON
    // twin: a non-streamed answer fails with its HTTP status, or arrives whole.
    for (const scenario of scenarios.filter((s) => s[recordings])) {
      test(scenario.name, async () => {
        upstream.reset();
        upstream.split = split as Split;
        upstream.play(...scenario[recordings]!);
        const outcome = await run(scenario.freshModel ? `fresh-${split}` : 'conductor');
        assert.deepEqual(upstream.pending(), [], 'every recording was asked for');
        assert.deepEqual(upstream.mismatches, [], 'each call asked for the kind of answer it got');
        if (scenario.error) return expectError(scenario, outcome);
        const json = recordings === 'json';
        // A message's answer is its last text block: reasoning a streamed reply showed before a tool round stays in an earlier block.
        const messages = run === messagesCollected || run === messagesStreamed;
        expectAnswer(scenario, outcome, json || messages ? scenario.answer : (scenario.streamedAnswer ?? scenario.answer), json);
      });
    }
  });
}

function expectError(scenario: Scenario, outcome: Outcome): void {
  const { error } = scenario;
  // Collected: the HTTP status. Streamed: accepted at the first 2xx, so the error is the last chunk.
  assert.equal(outcome.status === 200 ? 502 : outcome.status, error!.status);
  assert.equal(outcome.error?.code, error!.code);
  assert.ok(outcome.error!.message.includes(error!.message), outcome.error!.message);
  assert.ok(!outcome.error!.message.includes('127.0.0.1'), 'the upstream URL stays private');
}

function expectAnswer(scenario: Scenario, outcome: Outcome, answer: string | undefined, json: boolean): void {
  assert.equal(outcome.status, 200, JSON.stringify(outcome.error));
  assert.equal(outcome.content, answer);
  if (answer === scenario.answer) {
    for (const word of REASONING) assert.ok(!outcome.content.includes(word), `reasoning leaked: ${word}`);
  }

  // The right tools ran, with the right arguments, and their results went back under the ids the
  // assistant turn carries: one tool message per call in the second request.
  const calls = scenario.calls ?? [];
  assert.deepEqual(
    outcome.trace.map((t) => [t.tool, t.arguments, t.ok]),
    calls.map((c) => ['get_time', { timezone: c.timezone }, true]),
  );
  assert.equal(upstream.requests.length, calls.length ? 2 : 1);
  const first = upstream.requests[0];
  assert.equal(first.parallel_tool_calls, true, 'llama.cpp parses one call unless asked');
  for (const request of upstream.requests) {
    // A collecting client's calls ask for JSON, without stream_options (vLLM refuses them unstreamed).
    assert.equal(request.stream, !json);
    assert.deepEqual(request.stream_options, json ? undefined : { include_usage: true });
  }
  if (calls.length) {
    const second = upstream.requests[1].messages;
    const assistant = second.find((m) => m.role === 'assistant')!;
    // The server's ids, except those too short to stay unique (SGLang's '0', '1'): fresh `call_` ones.
    const sentIds = assistant.tool_calls!.map((c) => c.id);
    assert.equal(sentIds.length, calls.length);
    calls.forEach((c, i) => (c.id.length >= 8 ? assert.equal(sentIds[i], c.id) : assert.match(sentIds[i], /^call_[A-Za-z0-9]{24}$/)));
    const results = second.filter((m) => m.role === 'tool');
    assert.deepEqual(
      results.map((m) => m.tool_call_id),
      sentIds,
    );
    results.forEach((m, i) => assert.equal((JSON.parse(m.content!) as { timezone: string }).timezone, calls[i].timezone));
  }

  const usage = outcome.usage!;
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
  const expected = (json && scenario.jsonUsage) || scenario.usage;
  if (expected && 'estimatedCompletion' in expected) {
    assert.equal(usage.completion_tokens, expected.estimatedCompletion);
    assert.ok(usage.prompt_tokens > 0);
  } else {
    assert.deepEqual({ prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens }, expected);
  }
}

test('every recording names its source and every one is replayed by some scenario', () => {
  const root = new URL('../../fixtures/upstreams/', import.meta.url);
  const recorded = readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => readdirSync(new URL(`${d.name}/`, root)).map((file) => `${d.name}/${file}`));
  for (const path of recorded) assert.match(loadRecording(path).header, /# Source: /);
  const played = new Set(scenarios.flatMap((s) => [...(s.play ?? []), ...(s.json ?? [])]));
  assert.deepEqual(recorded.filter((p) => !played.has(p)).sort(), []);
});

test('the awkward cuts land inside a UTF-8 character, inside "data:" and between the newlines of an event', () => {
  const body = loadRecording('vllm-hermes/answer.sse').body;
  const cuts = cutPoints(body, 'awkward');
  const at = (text: string, offset: number) => body.indexOf(text) + offset;
  assert.ok(cuts.includes(at('à', 1)), 'inside à');
  assert.ok(cuts.includes(at('🕑', 1)), 'inside a 4-byte character');
  assert.ok(cuts.includes(2), 'inside the first "data:"');
  assert.ok(cuts.includes(at('\n\n', 1)), 'between the two newlines');
  const crlf = Buffer.from('data: {"a":1}\r\n\r\n');
  assert.ok(cutPoints(crlf, 'awkward').includes(crlf.indexOf('\r\n') + 1), 'between \\r and \\n');
});
