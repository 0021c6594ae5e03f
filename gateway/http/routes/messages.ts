/**
 * The Anthropic Messages API: `POST /v1/messages` runs the chat loop (the same orchestrator, tools,
 * credits, limits and metrics as chat completions) and answers as one Message object or as its
 * streaming events; `POST /v1/messages/count_tokens` estimates the prompt, free of charge. Every
 * error on these paths is in the format's shape (`{type: "error", error: {type, message}}`), from
 * whichever layer: the error handler picks it by path (messages/message-errors.ts).
 *
 * @example
 *   registerMessageRoutes(router, { create: [gatedChat], count: [gated] }, { orchestrator, tools, logger })
 */
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import { toGatewayError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { ToolRunner } from '../../tools/types.js';
import type { ChatOrchestrator, ChatOutcome, ChatPlan, ChatSink } from '../../chat/orchestrator.js';
import type { ChatAbort } from '../../chat/chat-abort.js';
import { ClientCancelled } from '../../chat/upstream-errors.js';
import {
  countTokensRequestSchema,
  messagesRequestSchema,
  parseCountTokensRequest,
  parseMessagesRequest,
  type MessagesRequest,
} from '../../messages/message-request.js';
import { MessageOutput, newId } from '../../messages/message-output.js';
import { messageObject, stopReasonOf } from '../../messages/message-object.js';
import { MESSAGES_PATH, messageErrorBody } from '../../messages/message-errors.js';
import { MessageEventWriter } from '../sse/message-event-writer.js';
import { callerWallet } from '../middleware/wallet.js';
import { traceOf } from '../middleware/trace-request.js';
import { assertModelAllowed, keyOfPlan } from '../key-scope.js';
import { chargeOrigin } from '../charge-origin.js';
import { setCreditHeaders } from '../credit-headers.js';
import { answerUnlessClientLeaves } from '../client-disconnect.js';
import { json, type RouteDoc } from '../openapi/route-doc.js';
import type { ErrorBodyByPath } from '../openapi/openapi-document.js';
import { x402RouteDocs } from '../middleware/x402-payment.js';

export interface MessageRouteDeps {
  orchestrator: ChatOrchestrator;
  /** Names each gateway tool run's server (`server_name`). */
  tools: ToolRunner;
  logger: Logger;
}

/** One message while it runs. */
interface MessageRun {
  id: string;
  plan: ChatPlan;
}

export function registerMessageRoutes(router: Router, guards: { create: Middleware[]; count: Middleware[] }, deps: MessageRouteDeps): void {
  router.post('/v1/messages', ...guards.create, async (ctx) => {
    const request = parseMessagesRequest(ctx.request.body);
    const run = { id: newId('msg'), plan: planOf(ctx, request, deps.orchestrator) };
    await answerUnlessClientLeaves(ctx, (abort) =>
      request.stream ? streamAnswer(ctx, run, deps, abort) : jsonAnswer(ctx, run, deps, abort),
    );
  });

  router.post('/v1/messages/count_tokens', ...guards.count, async (ctx) => {
    const request = parseCountTokensRequest(ctx.request.body);
    ctx.body = { input_tokens: await deps.orchestrator.estimatePromptTokens(planOf(ctx, request, deps.orchestrator)) };
  });
}

/** The request as the chat loop runs it: `system` as instructions, echoed gateway rounds as history. */
function planOf(ctx: Context, request: MessagesRequest, orchestrator: ChatOrchestrator): ChatPlan {
  const model = orchestrator.resolveModel(request.model);
  // A key limited to other models is refused before anything is estimated or sent upstream.
  assertModelAllowed(ctx, model.id);
  return {
    model,
    instructions: request.instructions,
    history: request.conversation.history,
    messages: request.conversation.messages,
    clientTools: request.clientTools,
    maxTokens: request.maxTokens,
    sampling: request.sampling,
    wallet: callerWallet(ctx),
    trace: traceOf(ctx),
    ...keyOfPlan(ctx),
    origin: chargeOrigin(ctx, 'message'),
  };
}

/** The server each tool comes from, for `server_name`. */
function serverNamer(tools: ToolRunner): (tool: string) => string {
  return (tool) => tools.listTools().find((info) => info.name === tool)?.server ?? 'gateway';
}

/** The chat loop's progress, written into `output` (and from there to the stream, if any). */
function sinkInto(output: MessageOutput, stream?: Pick<ChatSink, 'accepted' | 'drained'> & { toolsStarted(): void }): ChatSink {
  return {
    accepted: (first) => stream?.accepted(first),
    content: output.append,
    toolsRunning: (calls) => {
      output.toolsRunning(calls);
      stream?.toolsStarted();
    },
    toolsDone: (trace, results) => output.toolsDone(trace, results),
    drained: () => stream?.drained(),
    live: stream !== undefined,
  };
}

/** The loop ended: the client's calls as tool_use blocks, the open text closed; `max_tokens` logged with its cause. */
function finish(ctx: Context, run: MessageRun, output: MessageOutput, outcome: ChatOutcome, logger: Logger) {
  ctx.state.deployments = outcome.deployments;
  if (outcome.clientToolCalls) output.toolUses(outcome.clientToolCalls);
  output.finish();
  const stopReason = stopReasonOf(outcome.finishReason);
  if (stopReason === 'max_tokens') {
    // One stop reason for two causes, as chat's `length`: the log says which.
    logger.info({ message: run.id, cutShort: outcome.cutShort }, 'message stopped at max_tokens: cut by the token cap or the credits');
  }
  return stopReason;
}

async function jsonAnswer(ctx: Context, run: MessageRun, deps: MessageRouteDeps, abort: ChatAbort): Promise<void> {
  const output = new MessageOutput({ serverOf: serverNamer(deps.tools) });
  const outcome = await deps.orchestrator.run(run.plan, sinkInto(output), abort);
  const stopReason = finish(ctx, run, output, outcome, deps.logger);
  setCreditHeaders(ctx, outcome.credits);
  ctx.body = messageObject({ id: run.id, model: run.plan.model.id, content: output.blocks, stopReason, usage: outcome.usage });
}

async function streamAnswer(ctx: Context, run: MessageRun, deps: MessageRouteDeps, abort: ChatAbort): Promise<void> {
  const events = new MessageEventWriter(ctx.res, deps.orchestrator.keepAliveMs);
  const output = new MessageOutput({ serverOf: serverNamer(deps.tools), events });
  const sink = sinkInto(output, {
    // Accepted (the first upstream call answered 2xx): from here on failures are events, not statuses.
    accepted({ promptTokens }) {
      ctx.status = 200;
      ctx.respond = false;
      events.begin();
      const usage = { prompt_tokens: promptTokens, completion_tokens: 0 };
      events.send('message_start', {
        message: messageObject({ id: run.id, model: run.plan.model.id, content: [], stopReason: null, usage }),
      });
    },
    toolsStarted: () => events.ping(),
    drained: () => events.drained(),
  });
  try {
    const outcome = await deps.orchestrator.run(run.plan, sink, abort);
    const stopReason = finish(ctx, run, output, outcome, deps.logger);
    const { prompt_tokens, completion_tokens } = outcome.usage;
    events.send('message_delta', {
      delta: { stop_reason: stopReason, stop_sequence: null },
      // Cumulative over every upstream call of the message: the SDKs take both as the totals.
      usage: { input_tokens: prompt_tokens, output_tokens: completion_tokens },
      ...(outcome.credits ? { credits: outcome.credits } : {}),
    });
    events.send('message_stop', {});
    events.end();
  } catch (err) {
    if (err instanceof ClientCancelled || !events.started) throw err; // cancelled, or nothing sent yet: a plain HTTP error
    const gatewayError = toGatewayError(err);
    ctx.state.error = gatewayError;
    events.error(messageErrorBody(gatewayError));
    events.end();
  } finally {
    events.stop();
  }
}

const textBlockSchema = z.object({ type: z.literal('text'), text: z.string() });

const contentBlockSchema = z.union([
  textBlockSchema,
  z.object({
    type: z.literal('mcp_tool_use').meta({ description: 'One run of a gateway tool, as the MCP connector writes it' }),
    id: z.string().meta({ description: '`mcptoolu_…`' }),
    name: z.string(),
    server_name: z.string().meta({ description: "The tool server's configured name" }),
    input: z.record(z.string(), z.unknown()),
  }),
  z.object({
    type: z.literal('mcp_tool_result'),
    tool_use_id: z.string(),
    is_error: z.boolean(),
    content: z.array(textBlockSchema).meta({ description: 'The result as the model read it (JSON text)' }),
  }),
  z.object({
    type: z.literal('tool_use').meta({ description: "A call of the client's own tool: answer with a tool_result block" }),
    id: z.string(),
    name: z.string(),
    input: z.record(z.string(), z.unknown()),
  }),
]);

const usageSchema = z.object({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  cache_creation_input_tokens: z.number().int().nonnegative(),
  cache_read_input_tokens: z.number().int().nonnegative(),
});

const messageSchema = z.object({
  id: z.string().meta({ description: '`msg_…`' }),
  type: z.literal('message'),
  role: z.literal('assistant'),
  model: z.string().meta({ description: 'Canonical model id' }),
  content: z.array(contentBlockSchema),
  stop_reason: z.enum(['end_turn', 'max_tokens', 'tool_use']).nullable().meta({
    description:
      '`max_tokens`: the output cap or the credits cut the answer; `tool_use`: calls of your tools to answer. Null only in `message_start`',
  }),
  stop_sequence: z.null().meta({ description: 'Always null: the upstreams do not say which stop string matched' }),
  usage: usageSchema.meta({ description: 'Summed over every upstream call of the message' }),
});

/** One event of a streamed message (`event: <type>` names it; keep-alives are `ping` events). */
const streamEventSchema = z.union([
  z.object({
    type: z.literal('message_start'),
    message: messageSchema.meta({ description: 'Empty, usage provisional (the estimated prompt)' }),
  }),
  z.object({ type: z.literal('content_block_start'), index: z.number().int(), content_block: contentBlockSchema }),
  z.object({
    type: z.literal('content_block_delta'),
    index: z.number().int(),
    delta: z.union([
      z.object({ type: z.literal('text_delta'), text: z.string() }),
      z.object({ type: z.literal('input_json_delta'), partial_json: z.string() }),
    ]),
  }),
  z.object({ type: z.literal('content_block_stop'), index: z.number().int() }),
  z.object({
    type: z.literal('message_delta'),
    delta: z.object({ stop_reason: z.enum(['end_turn', 'max_tokens', 'tool_use']), stop_sequence: z.null() }),
    usage: z.object({ input_tokens: z.number().int(), output_tokens: z.number().int() }).meta({ description: 'Cumulative, every call' }),
    credits: z
      .object({ charged: z.number().int().nonnegative(), remaining: z.number().int().nonnegative() })
      .optional()
      .meta({ description: 'When credits are on' }),
  }),
  z.object({ type: z.literal('message_stop') }),
  z.object({ type: z.literal('ping') }),
  z.object({ type: z.literal('error'), error: z.object({ type: z.string(), message: z.string() }) }),
]);

/** Every error on /v1/messages*, from any layer: the Messages API's shape. */
const messageErrorSchema = z.object({
  type: z.literal('error'),
  error: z.object({
    type: z.string().meta({
      description:
        'By status: 400 invalid_request_error, 401 authentication_error, 402 billing_error, 403 permission_error, ' +
        '404 not_found_error, 413 request_too_large, 429 rate_limit_error, 500/502 api_error, 503 overloaded_error, 504 timeout_error',
    }),
    message: z.string().meta({ description: "The gateway's error code, a colon, then the message" }),
  }),
});

/** For the document's `x-error-bodies-by-path`: the body of every error under the path, off its operations too. */
export const messageErrorBodyByPath: ErrorBodyByPath = { path: MESSAGES_PATH, name: 'MessagesErrorBody', body: messageErrorSchema };

/** The HTTP server's own 431 (and a 400 for what is no HTTP) come before any path is known: those stay in the plain shape. */
const errorShape = { errorBody: messageErrorSchema, errorBodies: { 417: messageErrorSchema } };

export const messageRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/v1/messages',
    tag: 'Messages',
    summary: 'Create a message (Anthropic Messages API) with automatic tool orchestration',
    description:
      'The Anthropic Messages format over the same tool loop as chat completions (docs/messages.md): each gateway tool run is an ' +
      '`mcp_tool_use` block followed by its `mcp_tool_result`; tools of your own come back as `tool_use` blocks with ' +
      '`stop_reason: "tool_use"`. `model` is one of the gateway\'s aliases or ids (`claude-…` names are 404). The key may come as ' +
      '`x-api-key` or Bearer; `anthropic-version` and `anthropic-beta` are accepted and ignored. With `stream: true` the ' +
      "answer is the format's Server-Sent Events." +
      x402RouteDocs.description,
    access: 'gated',
    headers: x402RouteDocs.headers,
    errorHeaders: x402RouteDocs.errorHeaders,
    body: messagesRequestSchema,
    response: {
      description: 'The message, or its event stream',
      content: { 'application/json': messageSchema, 'text/event-stream': streamEventSchema },
      headers: {
        'x-credits-charged': 'Credits this message cost (JSON answers, credits on)',
        'x-credits-remaining': 'The balance after it',
        ...x402RouteDocs.responseHeaders,
      },
    },
    errors: [402, 404, 502, 503, 504],
    ...errorShape,
  },
  {
    method: 'post',
    path: '/v1/messages/count_tokens',
    tag: 'Messages',
    summary: 'Estimate the input tokens of a message',
    description:
      "An estimate (ceil(characters / 4), as the gateway estimates before each call): the gateway's preamble, `system`, the " +
      'conversation (with the gateway rounds it kept for a continuation) and the schemas of every tool the model is offered. Free of charge.',
    access: 'gated',
    body: countTokensRequestSchema,
    response: { description: 'The estimate', content: json(z.object({ input_tokens: z.number().int().nonnegative() })) },
    errors: [404],
    ...errorShape,
  },
];
