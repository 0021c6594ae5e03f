/**
 * The Responses API: `POST /v1/responses` runs the chat loop (the same orchestrator, tools,
 * credits, limits and metrics as chat completions) and answers as one response object or as its
 * streaming events; `GET` and `DELETE /v1/responses/{id}` read and remove a stored one, and
 * `GET /v1/responses/{id}/input_items` lists its input. A stored response belongs to the wallet
 * that created it: any other wallet gets 404, as if it did not exist (in free mode that is only as
 * strong as the wallet header); so do its items, which `item_reference` input items name.
 *
 * @example
 *   registerResponseRoutes(router, { create: [gated, chatSlots], read: [gated] }, { orchestrator, store, tools, ttlMs, logger })
 */
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import { toGatewayError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { ToolRunner } from '../../tools/types.js';
import type { ResponseStore } from '../../responses/response-store.js';
import type { ChatOrchestrator, ChatOutcome, ChatPlan, ChatSink } from '../../chat/orchestrator.js';
import type { ChatAbort } from '../../chat/chat-abort.js';
import type { UpstreamMessage } from '../../chat/chat-types.js';
import { ClientCancelled } from '../../chat/upstream-errors.js';
import { parseResponsesRequest, responsesRequestSchema, type ResponsesRequest } from '../../responses/response-request.js';
import { newId, ResponseOutput } from '../../responses/response-output.js';
import { responseObject, type ResponseState } from '../../responses/response-object.js';
import { inputMessages, listedInputItems, type ResolvedInputItem } from '../../responses/input-items.js';
import { resolveItemReferences } from '../../responses/item-references.js';
import { inputItemsPage, inputItemsQuerySchema, parseInputItemsQuery } from '../../responses/input-items-page.js';
import { ResponseEventWriter } from '../sse/response-event-writer.js';
import { assertCallsAnswered, keepResponse, loadResponse, responseNotFound, withoutEchoes } from '../../responses/stored-response.js';
import { assertModelAllowed, keyOfPlan } from '../key-scope.js';
import { callerWallet } from '../middleware/wallet.js';
import { traceOf } from '../middleware/trace-request.js';
import { chargeOrigin } from '../charge-origin.js';
import { setCreditHeaders } from '../credit-headers.js';
import { answerUnlessClientLeaves } from '../client-disconnect.js';
import { json, type RouteDoc } from '../openapi/route-doc.js';
import { x402RouteDocs } from '../middleware/x402-payment.js';

export interface ResponseRouteDeps {
  orchestrator: ChatOrchestrator;
  store: ResponseStore;
  /** Names each gateway tool run's server (`server_label`). */
  tools: ToolRunner;
  /** How long a stored response is kept (`responses.ttlMs`). */
  ttlMs: number;
  logger: Logger;
}

/** One response while it runs: what the route knows before the loop starts. */
interface ResponseRun {
  state: ResponseState;
  plan: ChatPlan;
  /** Messages of `instructions` at the start of the conversation (they are not stored). */
  instructionMessages: number;
  wallet: string;
  /** This turn's input, references resolved (listed by input_items once stored). */
  input: ResolvedInputItem[];
  /** The ids of the items the conversation carries besides this response's output. */
  carried: string[];
}

export function registerResponseRoutes(
  router: Router,
  guards: { create: Middleware[]; read: Middleware[] },
  deps: ResponseRouteDeps,
): void {
  router.post('/v1/responses', ...guards.create, async (ctx) => {
    const request = parseResponsesRequest(ctx.request.body);
    const run = await prepare(ctx, request, deps);
    await answerUnlessClientLeaves(ctx, (abort) =>
      request.stream ? streamAnswer(ctx, run, deps, abort) : jsonAnswer(ctx, run, deps, abort),
    );
  });

  router.get('/v1/responses/:id', ...guards.read, async (ctx) => {
    const stored = await loadResponse(deps.store, ctx.params.id, callerWallet(ctx));
    ctx.body = stored.response;
  });

  router.get('/v1/responses/:id/input_items', ...guards.read, async (ctx) => {
    const query = parseInputItemsQuery(ctx.query);
    const stored = await loadResponse(deps.store, ctx.params.id, callerWallet(ctx));
    ctx.body = inputItemsPage(stored.input, query);
  });

  router.delete('/v1/responses/:id', ...guards.read, async (ctx) => {
    const id = ctx.params.id;
    if (!(await deps.store.delete(id, callerWallet(ctx), Date.now()))) throw responseNotFound(id);
    ctx.body = { id, object: 'response', deleted: true };
  });
}

/**
 * Check the answer format, resolve the model, the earlier turns and the referenced items (404 for
 * a previous response or an item this wallet cannot see).
 */
async function prepare(ctx: Context, request: ResponsesRequest, deps: ResponseRouteDeps): Promise<ResponseRun> {
  const format = request.format && deps.orchestrator.answerFormat(request.format, 'text.format');
  const model = deps.orchestrator.resolveModel(request.model);
  assertModelAllowed(ctx, model.id);
  const wallet = callerWallet(ctx);
  const stored = request.previousResponseId
    ? await loadResponse(deps.store, request.previousResponseId, wallet, 'previous_response_id')
    : undefined;
  const earlier = stored?.conversation ?? [];
  const resolved = await resolveItemReferences(deps.store, request.input, { wallet, carried: new Set(stored?.carried) });
  const input = inputMessages(resolved.items);
  assertCallsAnswered(earlier, input);
  const instructions: UpstreamMessage[] = request.instructions ? [{ role: 'system', content: request.instructions }] : [];
  return {
    state: { id: newId('resp'), createdAt: Math.floor(Date.now() / 1000), model: model.id, request, status: 'in_progress', output: [] },
    plan: {
      model,
      // The stored conversation is whole (every gateway round in it): only this turn's input may
      // carry calls whose gateway rounds the orchestrator kept (a client that resends items itself).
      instructions,
      history: earlier,
      messages: stored ? withoutEchoes(stored, input) : input,
      clientTools: request.clientTools,
      maxTokens: request.maxOutputTokens,
      sampling: request.sampling,
      wallet,
      ...keyOfPlan(ctx),
      origin: chargeOrigin(ctx, 'response'),
      ...(format ? { format } : {}),
      trace: traceOf(ctx),
    },
    instructionMessages: instructions.length,
    wallet,
    input: resolved.items,
    carried: [...(stored?.carried ?? []), ...resolved.referenced],
  };
}

/** The chat loop's progress, written into `output` (and from there to the stream, if any). */
function sinkInto(output: ResponseOutput, stream?: { accepted(): void; drained(): Promise<void> | undefined }): ChatSink {
  return {
    accepted: () => stream?.accepted(),
    content: output.append,
    toolsRunning: (calls) => output.toolsRunning(calls),
    toolsDone: (trace, results) => output.toolsDone(trace, results),
    drained: () => stream?.drained(),
    live: stream !== undefined,
  };
}

/** The server each tool comes from, for `server_label`. */
function serverLabeller(tools: ToolRunner): (tool: string) => string {
  return (tool) => tools.listTools().find((info) => info.name === tool)?.server ?? 'gateway';
}

async function jsonAnswer(ctx: Context, run: ResponseRun, deps: ResponseRouteDeps, abort: ChatAbort): Promise<void> {
  const output = new ResponseOutput({ serverOf: serverLabeller(deps.tools) });
  const outcome = await deps.orchestrator.run(run.plan, sinkInto(output), abort);
  ctx.state.deployments = outcome.deployments;
  const response = await finish(run, output, outcome, deps);
  setCreditHeaders(ctx, outcome.credits);
  ctx.body = response;
}

async function streamAnswer(ctx: Context, run: ResponseRun, deps: ResponseRouteDeps, abort: ChatAbort): Promise<void> {
  const events = new ResponseEventWriter(ctx.res, deps.orchestrator.keepAliveMs);
  const output = new ResponseOutput({ serverOf: serverLabeller(deps.tools), events });
  const sink = sinkInto(output, {
    // Accepted (the first upstream call answered 2xx): from here on failures are events, not statuses.
    accepted() {
      ctx.status = 200;
      ctx.respond = false;
      events.begin();
      const response = responseObject(run.state);
      events.send('response.created', { response });
      events.send('response.in_progress', { response });
    },
    drained: () => events.drained(),
  });
  try {
    const outcome = await deps.orchestrator.run(run.plan, sink, abort);
    ctx.state.deployments = outcome.deployments;
    const response = await finish(run, output, outcome, deps);
    const terminal = response.status === 'completed' ? 'response.completed' : 'response.incomplete';
    events.send(terminal, { response: outcome.credits ? { ...response, credits: outcome.credits } : response });
    events.end();
  } catch (err) {
    if (err instanceof ClientCancelled || !events.started) throw err; // cancelled, or nothing sent yet: a plain HTTP error
    const gatewayError = toGatewayError(err);
    ctx.state.error = gatewayError;
    output.finish('incomplete');
    // The failed response first (a client's snapshot ends in it), then the error itself, which
    // the official client's stream helpers raise to the caller.
    const { message, code, param } = gatewayError.toBody().error;
    const error = { code: gatewayError.status === 429 ? 'rate_limit_exceeded' : 'server_error', message };
    events.send('response.failed', { response: responseObject({ ...run.state, status: 'failed', output: output.items, error }) });
    events.send('error', { code, message, param });
    events.end();
  } finally {
    events.stop();
  }
}

/**
 * The loop answered: the final response object, stored when asked with the whole conversation as
 * the model saw it but the instructions (earlier turns, this input, this request's tool rounds,
 * then the answer — or, when the client's functions were called, the round that called them,
 * awaiting their outputs).
 */
async function finish(
  run: ResponseRun,
  output: ResponseOutput,
  outcome: ChatOutcome,
  deps: ResponseRouteDeps,
): Promise<Record<string, unknown>> {
  const status = outcome.finishReason === 'length' ? 'incomplete' : 'completed';
  if (outcome.clientToolCalls) output.functionCalls(outcome.clientToolCalls);
  output.finish(status);
  const incompleteReason = outcome.cutShort === 'credits' ? 'insufficient_credits' : 'max_output_tokens';
  const response = responseObject({ ...run.state, status, incompleteReason, output: output.items, usage: outcome.usage });
  if (run.state.request.store) {
    const answer: UpstreamMessage[] = outcome.clientToolCalls ? [] : [{ role: 'assistant', content: output.answerText }];
    const conversation = [...outcome.conversation.slice(run.instructionMessages), ...answer];
    let kept = false;
    try {
      kept = await keepResponse(deps.store, {
        id: run.state.id,
        wallet: run.wallet,
        ttlMs: deps.ttlMs,
        response,
        conversation,
        input: listedInputItems(run.input),
        carried: run.carried,
      });
      if (!kept) deps.logger.warn({ response: run.state.id }, 'response not stored: larger than the per-wallet byte quota');
    } catch (err) {
      // The answer is paid for and ready: it goes out; only GET and previous_response_id miss it.
      deps.logger.error({ err, response: run.state.id }, 'storing a response failed');
    }
    // Say so in the answer, so a client does not chain on an id that will be 404.
    if (!kept) return { ...response, store: false };
  }
  return response;
}

const usageSchema = z.object({
  input_tokens: z.number().int().nonnegative(),
  input_tokens_details: z.object({ cached_tokens: z.number().int(), cache_write_tokens: z.number().int() }),
  output_tokens: z.number().int().nonnegative(),
  output_tokens_details: z.object({ reasoning_tokens: z.number().int() }),
  total_tokens: z.number().int().nonnegative(),
});

const outputItemSchema = z.union([
  z.object({
    id: z.string().meta({ description: '`msg_…`' }),
    type: z.literal('message'),
    status: z.enum(['in_progress', 'completed', 'incomplete']),
    role: z.literal('assistant'),
    content: z.array(
      z.object({ type: z.literal('output_text'), text: z.string(), annotations: z.array(z.unknown()), logprobs: z.array(z.unknown()) }),
    ),
  }),
  z.object({
    id: z.string().meta({ description: '`mcp_…`' }),
    type: z.literal('mcp_call').meta({ description: 'One run of a gateway tool' }),
    status: z.enum(['in_progress', 'completed', 'failed']),
    server_label: z.string().meta({ description: 'The tool server that ran it' }),
    name: z.string(),
    arguments: z.string().meta({ description: 'JSON text, as the model wrote it' }),
    output: z.string().nullable().meta({ description: 'The result as the model read it (JSON text)' }),
    error: z.string().nullable(),
  }),
  z.object({
    id: z.string().meta({ description: '`fc_…`' }),
    type: z.literal('function_call').meta({ description: "A call of the client's own function: answer with a function_call_output item" }),
    status: z.literal('completed'),
    call_id: z.string(),
    name: z.string(),
    arguments: z.string(),
  }),
]);

const responseSchema = z.object({
  id: z.string().meta({ description: '`resp_…`' }),
  object: z.literal('response'),
  created_at: z.number().int(),
  status: z.enum(['in_progress', 'completed', 'incomplete', 'failed']),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  incomplete_details: z
    .object({
      reason: z.enum(['max_output_tokens', 'insufficient_credits']).meta({
        description:
          '`max_output_tokens`: the token cap cut the answer; `insufficient_credits`: the credits ran out before the next call ' +
          '(the AI SDK reports it as finish reason `other`)',
      }),
    })
    .nullable(),
  instructions: z.string().nullable(),
  max_output_tokens: z.number().int().nullable(),
  model: z.string().meta({ description: 'Canonical model id' }),
  output: z.array(outputItemSchema),
  parallel_tool_calls: z.boolean(),
  previous_response_id: z.string().nullable(),
  temperature: z.number().nullable(),
  top_p: z.number().nullable(),
  tool_choice: z.union([z.enum(['auto', 'none', 'required']), z.object({ type: z.literal('function'), name: z.string() })]),
  tools: z.array(
    z.object({
      type: z.literal('function'),
      name: z.string(),
      description: z.string().nullable(),
      parameters: z.record(z.string(), z.unknown()).nullable(),
      strict: z.boolean().nullable(),
    }),
  ),
  metadata: z.record(z.string(), z.string()),
  store: z.boolean(),
  text: z.object({
    format: z.union([
      z.object({ type: z.enum(['text', 'json_object']) }),
      z.object({
        type: z.literal('json_schema'),
        name: z.string(),
        description: z.string().optional(),
        schema: z.record(z.string(), z.unknown()),
        strict: z.boolean().nullable(),
      }),
    ]),
  }),
  truncation: z.literal('disabled'),
  usage: usageSchema.nullable(),
  user: z.string().optional(),
});

/** One listed input item: a message, a function call or its output, or a gateway tool run (as in `output`). */
const inputItemSchema = z.union([
  z.object({
    id: z.string(),
    type: z.literal('message'),
    role: z.enum(['user', 'system', 'developer', 'assistant']),
    status: z.literal('completed'),
    content: z.array(
      z.union([
        z.object({ type: z.literal('input_text'), text: z.string() }),
        z.object({ type: z.literal('output_text'), text: z.string(), annotations: z.array(z.unknown()), logprobs: z.array(z.unknown()) }),
      ]),
    ),
  }),
  z.object({
    id: z.string(),
    type: z.literal('function_call'),
    status: z.literal('completed'),
    call_id: z.string(),
    name: z.string(),
    arguments: z.string(),
  }),
  z.object({
    id: z.string(),
    type: z.literal('function_call_output'),
    status: z.literal('completed'),
    call_id: z.string(),
    output: z.string(),
  }),
  z.object({
    id: z.string(),
    type: z.literal('mcp_call'),
    status: z.enum(['completed', 'failed']),
    server_label: z.string(),
    name: z.string(),
    arguments: z.string(),
    output: z.string().nullable(),
    error: z.string().nullable(),
  }),
]);

const inputItemListSchema = z.object({
  object: z.literal('list'),
  data: z.array(inputItemSchema),
  first_id: z.string().nullable(),
  last_id: z.string().nullable(),
  has_more: z.boolean(),
});

/** One streamed event; its other fields are those of the Responses API event of that type. */
const eventSchema = z.looseObject({
  type: z.string().meta({
    examples: [
      'response.created',
      'response.output_item.added',
      'response.output_text.delta',
      'response.mcp_call.completed',
      'response.completed',
    ],
  }),
  sequence_number: z.number().int().nonnegative(),
  response: responseSchema.optional(),
  code: z.string().nullable().optional().meta({ description: "On `error`: the gateway's error code" }),
  message: z.string().optional().meta({ description: 'On `error`' }),
  param: z.string().nullable().optional(),
});

const idParam = z.object({ id: z.string().meta({ description: 'A `resp_…` id' }) });

export const responseRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/v1/responses',
    tag: 'Responses',
    summary: 'Create a response (Responses API)',
    description:
      'The chat loop in the Responses API format: each gateway tool run is an `mcp_call` item, the answer a `message` item. ' +
      "Functions of the client's own (`tools` of type `function`) are offered next to the gateway's tools; when the model " +
      'calls one, the response ends with `function_call` items, and a request with `previous_response_id` and ' +
      '`function_call_output` items continues it. ' +
      'With `stream: true`, Server-Sent Events (`response.created`, `response.in_progress`, `response.output_item.added` / `.done`, ' +
      '`response.output_text.delta` / `.done`, `response.mcp_call.*`, `response.function_call_arguments.delta` / `.done`, then `response.completed`, `.incomplete`, or ' +
      '`response.failed` and `error`), each with a `sequence_number`. Stored for `responses.ttlMs` unless `store: false`; ' +
      "`previous_response_id` continues a stored one. `input` may name output items of the wallet's stored responses as " +
      '`{"type": "item_reference", "id": …}` (an unknown, expired, deleted or other wallet\'s item, or one of a `store: false` ' +
      'response, is 404 `item_not_found` with `param: "input"`; one that `previous_response_id` already carries is used once). ' +
      '`text.format` asks for a JSON answer (`json_object`, or `json_schema` with a schema of at most 64 KiB and 32 levels, ' +
      'only local `$ref`s, patterns RE2 can compile; a bad schema is 400 naming `text.format.schema`). ' +
      'Shares the per-wallet chat concurrency cap.' +
      x402RouteDocs.description,
    access: 'gated',
    headers: x402RouteDocs.headers,
    errorHeaders: x402RouteDocs.errorHeaders,
    body: responsesRequestSchema,
    response: {
      description: 'The response, or its event stream',
      content: { 'application/json': responseSchema, 'text/event-stream': eventSchema },
      headers: {
        'x-credits-charged': 'Credits this response cost (JSON answers, credits on)',
        'x-credits-remaining': 'The balance after it',
        ...x402RouteDocs.responseHeaders,
      },
    },
    errors: [402, 404, 502, 503, 504],
  },
  {
    method: 'get',
    path: '/v1/responses/:id/input_items',
    tag: 'Responses',
    summary: "List a stored response's input items",
    description:
      'The input the response was created with, each item with an id (references resolved to the items they named), ' +
      'a page at a time. Only the wallet that created the response may list it; any other wallet gets 404.',
    access: 'gated',
    pathParams: idParam,
    query: inputItemsQuerySchema,
    response: { description: 'A page of input items', content: json(inputItemListSchema) },
    errors: [404],
  },
  {
    method: 'get',
    path: '/v1/responses/:id',
    tag: 'Responses',
    summary: 'Retrieve a stored response',
    description: 'Only the wallet that created it may read it; any other wallet gets 404 (as for an expired or deleted one).',
    access: 'gated',
    pathParams: idParam,
    response: { description: 'The stored response object', content: json(responseSchema) },
    errors: [404],
  },
  {
    method: 'delete',
    path: '/v1/responses/:id',
    tag: 'Responses',
    summary: 'Delete a stored response',
    access: 'gated',
    pathParams: idParam,
    response: {
      description: 'Deleted',
      content: json(z.object({ id: z.string(), object: z.literal('response'), deleted: z.literal(true) })),
    },
    errors: [404],
  },
];
