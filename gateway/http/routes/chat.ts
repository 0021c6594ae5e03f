/**
 * `POST /v1/chat/completions`: validate, run the chat loop, answer as one JSON completion or as
 * Server-Sent Events. A client that disconnects (streaming or not) aborts the upstream call and
 * the running tool calls at once; credits settle what was consumed.
 *
 * @example
 *   registerChatRoutes(router, [gated, chatConcurrency(config.limits)], orchestrator)
 */
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { toGatewayError } from '../../errors.js';
import { chatRequestSchema, parseChatRequest, type ChatRequest } from '../../chat/chat-request.js';
import { ClientCancelled } from '../../chat/upstream-errors.js';
import { SseWriter } from '../sse/sse-writer.js';
import type { ChatOrchestrator, ChatOutcome, ChatPlan, ChatSink } from '../../chat/orchestrator.js';
import type { ChatAbort } from '../../chat/chat-abort.js';
import { answerUnlessClientLeaves } from '../client-disconnect.js';
import { callerWallet } from '../middleware/wallet.js';
import { traceOf } from '../middleware/trace-request.js';
import { chargeOrigin } from '../charge-origin.js';
import { setCreditHeaders } from '../credit-headers.js';
import { z } from 'zod';
import { errorObjectSchema, type RouteDoc } from '../openapi/route-doc.js';
import { x402RouteDocs } from '../middleware/x402-payment.js';
import { assertModelAllowed, keyOfPlan } from '../key-scope.js';

export function registerChatRoutes(router: Router, guards: Middleware[], orchestrator: ChatOrchestrator): void {
  const ids = completionIds();
  router.post('/v1/chat/completions', ...guards, async (ctx) => {
    const request = parseChatRequest(ctx.request.body);
    const format = request.format && orchestrator.answerFormat(request.format, 'response_format');
    const model = orchestrator.resolveModel(request.model);
    assertModelAllowed(ctx, model.id);
    const plan: ChatPlan = {
      model,
      messages: request.messages,
      clientTools: request.clientTools,
      maxTokens: request.maxTokens,
      sampling: request.sampling,
      wallet: callerWallet(ctx),
      ...keyOfPlan(ctx),
      origin: chargeOrigin(ctx, 'chat'),
      ...(format ? { format } : {}),
      trace: traceOf(ctx),
    };
    const id = ids.next();
    const created = Math.floor(Date.now() / 1000);
    const identity = { id, created, model: model.id };
    await answerUnlessClientLeaves(ctx, (abort) =>
      request.stream
        ? streamAnswer(ctx, orchestrator, plan, request, identity, abort)
        : jsonAnswer(ctx, orchestrator, plan, identity, abort),
    );
  });
}

/** A JSON answer needs no progress: the outcome carries the whole content. */
const COLLECT_ONLY: ChatSink = { accepted() {}, content() {}, toolsRunning() {}, drained: () => undefined, live: false };

async function jsonAnswer(
  ctx: Context,
  orchestrator: ChatOrchestrator,
  plan: ChatPlan,
  identity: { id: string; created: number; model: string },
  abort: ChatAbort,
): Promise<void> {
  const outcome = await orchestrator.run(plan, COLLECT_ONLY, abort);
  ctx.state.deployments = outcome.deployments;
  setCreditHeaders(ctx, outcome.credits);
  ctx.body = {
    id: identity.id,
    object: 'chat.completion',
    created: identity.created,
    model: identity.model,
    choices: [{ index: 0, message: answerMessage(outcome), finish_reason: outcome.finishReason }],
    usage: outcome.usage,
    tool_trace: outcome.toolTrace,
  };
}

/** The answer's message: with the client's calls, `tool_calls` and the text so far (null when none), as OpenAI writes it. */
function answerMessage(outcome: ChatOutcome): Record<string, unknown> {
  if (!outcome.clientToolCalls) return { role: 'assistant', content: outcome.content };
  return { role: 'assistant', content: outcome.content || null, tool_calls: outcome.clientToolCalls };
}

async function streamAnswer(
  ctx: Context,
  orchestrator: ChatOrchestrator,
  plan: ChatPlan,
  request: ChatRequest,
  identity: { id: string; created: number; model: string },
  abort: ChatAbort,
): Promise<void> {
  const sse = new SseWriter(ctx.res, identity, orchestrator.keepAliveMs);
  const sink: ChatSink = {
    // Accepted (the first upstream call answered 2xx): the status line and headers go out now,
    // whatever the model does next. Koa must not touch the response once we write to it ourselves.
    accepted() {
      ctx.status = 200;
      ctx.respond = false;
      sse.begin();
    },
    content: (text) => sse.content(text),
    toolsRunning(calls) {
      for (const call of calls) sse.comment(`tool ${call.function.name}`);
    },
    // Comments, so OpenAI clients skip them; the playground's tool panel reads them live.
    toolsDone(entries) {
      for (const entry of entries) sse.comment(`tool_result ${JSON.stringify(entry)}`);
    },
    drained: () => sse.drained(),
  };
  try {
    const outcome = await orchestrator.run(plan, sink, abort);
    ctx.state.deployments = outcome.deployments;
    if (outcome.clientToolCalls) sse.toolCalls(outcome.clientToolCalls);
    sse.finish({ finishReason: outcome.finishReason, toolTrace: outcome.toolTrace, credits: outcome.credits });
    if (request.includeUsage) sse.usage(outcome.usage);
    sse.done();
  } catch (err) {
    if (err instanceof ClientCancelled || !sse.started) throw err; // cancelled, or nothing sent yet: a plain HTTP error
    const gatewayError = toGatewayError(err);
    ctx.state.error = gatewayError;
    sse.error(gatewayError);
    sse.done();
  } finally {
    sse.stop();
  }
}

/** `chatcmpl-<number>`: milliseconds and a per-process sequence, unique within this gateway. */
function completionIds(): { next(): string } {
  let sequence = 0;
  return {
    next() {
      sequence = (sequence + 1) % 1000;
      return `chatcmpl-${Date.now() * 1000 + sequence}`;
    },
  };
}

const usageSchema = z.object({
  prompt_tokens: z.number().int().nonnegative(),
  completion_tokens: z.number().int().nonnegative(),
  total_tokens: z.number().int().nonnegative(),
});

const toolTraceSchema = z
  .array(
    z.object({
      round: z.number().int().positive().meta({ description: '1-based tool round' }),
      tool: z.string(),
      arguments: z.unknown().meta({ description: 'Parsed arguments, or the raw text when the model wrote malformed JSON' }),
      ok: z.boolean(),
      duration_ms: z.number().nonnegative(),
      error: z.object({ code: z.string(), message: z.string() }).optional(),
    }),
  )
  .meta({ description: 'Every tool call the gateway ran for this answer, in order' });

const toolCallSchema = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

const toolCallDeltaSchema = z.object({
  index: z.number().int(),
  id: z.string().optional(),
  type: z.literal('function').optional(),
  function: z.object({ name: z.string().optional(), arguments: z.string() }),
});

const creditsSchema = z.object({ charged: z.number().int().nonnegative(), remaining: z.number().int().nonnegative() });

const completionSchema = z.object({
  id: z.string().meta({ description: '`chatcmpl-` followed by a number' }),
  object: z.literal('chat.completion'),
  created: z.number().int(),
  model: z.string().meta({ description: 'Canonical model id' }),
  choices: z.array(
    z.object({
      index: z.number().int(),
      message: z.object({
        role: z.literal('assistant'),
        content: z.string().nullable().meta({ description: 'null only when handing back tool calls with no text' }),
        tool_calls: z
          .array(toolCallSchema)
          .optional()
          .meta({ description: "Calls of the client's own functions (finish_reason `tool_calls`)" }),
      }),
      finish_reason: z.string(),
    }),
  ),
  usage: usageSchema,
  tool_trace: toolTraceSchema,
});

/**
 * One `data:` event of a streamed answer. Comments (`: tool <name>` as a tool round starts,
 * `: tool_result <trace entry>` as it ends, `: keepalive`) come between them, and `data: [DONE]` ends the stream.
 */
const chunkSchema = z.object({
  id: z.string(),
  object: z.literal('chat.completion.chunk'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number().int(),
      delta: z.object({
        role: z.literal('assistant').optional(),
        content: z.string().optional(),
        tool_calls: z.array(toolCallDeltaSchema).optional(),
      }),
      finish_reason: z.string().nullable().meta({ description: '`error` when the answer failed after the stream began' }),
    }),
  ),
  tool_trace: toolTraceSchema.optional().meta({ description: 'On the chunk with finish_reason' }),
  credits: creditsSchema.optional().meta({ description: 'On the chunk with finish_reason, when credits are on' }),
  usage: usageSchema.optional().meta({ description: 'With stream_options.include_usage, on a last chunk with no choices' }),
  error: errorObjectSchema.optional().meta({ description: 'With finish_reason `error`' }),
});

export const chatRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/v1/chat/completions',
    tag: 'Chat',
    summary: 'Chat with automatic tool orchestration',
    description:
      'The gateway runs up to 8 rounds of its own tools and answers once: as JSON, or with `stream: true` as Server-Sent ' +
      'Events (`chat.completion.chunk` events, `: tool <name>` comments as tool rounds start and `: tool_result <JSON trace ' +
      "entry>` as each call of a round ends, then `data: [DONE]`). Functions of the client's own (`tools`) are offered " +
      "next to the gateway's tools; when the model calls one, the answer hands the calls back (`tool_calls`, finish_reason " +
      '`tool_calls`) and the gateway keeps its own rounds for the continuation request that carries the results. ' +
      '`response_format` asks for a JSON answer (`json_object`, or `json_schema` with a schema of at most 64 KiB and 32 levels, ' +
      'only local `$ref`s, patterns RE2 can compile; a bad schema is 400 naming `response_format.json_schema.schema`): ' +
      "the answer is the final call's JSON alone, streamed only once it validated; an invalid one gets one corrective call, " +
      'and under `strict: true` one still invalid is 502 `upstream_invalid_output`.' +
      x402RouteDocs.description,
    access: 'gated',
    headers: x402RouteDocs.headers,
    errorHeaders: x402RouteDocs.errorHeaders,
    body: chatRequestSchema,
    response: {
      description: 'The completion, or its event stream',
      content: { 'application/json': completionSchema, 'text/event-stream': chunkSchema },
      headers: {
        'x-credits-charged': 'Credits this answer cost (JSON answers, credits on)',
        'x-credits-remaining': 'The balance after it',
        ...x402RouteDocs.responseHeaders,
      },
    },
    errors: [402, 404, 502, 503, 504],
  },
];
