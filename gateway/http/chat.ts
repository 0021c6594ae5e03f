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
import { toGatewayError } from '../errors.js';
import { parseChatRequest, type ChatRequest } from '../chat/chat-request.js';
import { ClientCancelled } from '../chat/upstream-errors.js';
import { SseWriter } from '../chat/sse-writer.js';
import type { ChatOrchestrator, ChatPlan, ChatSink } from '../chat/orchestrator.js';
import type { ChatCredits } from '../chat/chat-types.js';
import { ChatAbort } from '../chat/chat-abort.js';
import { callerWallet } from './wallet.js';

export function registerChatRoutes(router: Router, guards: Middleware[], orchestrator: ChatOrchestrator): void {
  const ids = completionIds();
  router.post('/v1/chat/completions', ...guards, async (ctx) => {
    const request = parseChatRequest(ctx.request.body);
    const model = orchestrator.resolveModel(request.model);
    const plan: ChatPlan = {
      model,
      messages: request.messages,
      toolsEnabled: request.toolsEnabled,
      maxTokens: request.maxTokens,
      sampling: request.sampling,
      wallet: callerWallet(ctx),
    };
    const id = ids.next();
    const created = Math.floor(Date.now() / 1000);
    const clientGone = abortOnDisconnect(ctx);
    try {
      if (request.stream) await streamAnswer(ctx, orchestrator, plan, request, { id, created, model: model.id }, clientGone.abort);
      else await jsonAnswer(ctx, orchestrator, plan, { id, created, model: model.id }, clientGone.abort);
    } catch (err) {
      if (!(err instanceof ClientCancelled)) throw err;
      // Nobody is listening: 499 (client closed request) for the request log, nothing sent.
      ctx.status = 499;
      ctx.respond = false;
      if (!ctx.res.destroyed) ctx.res.destroy();
    } finally {
      clientGone.dispose();
    }
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
  setCreditHeaders(ctx, outcome.credits);
  ctx.body = {
    id: identity.id,
    object: 'chat.completion',
    created: identity.created,
    model: identity.model,
    choices: [{ index: 0, message: { role: 'assistant', content: outcome.content }, finish_reason: outcome.finishReason }],
    usage: outcome.usage,
    tool_trace: outcome.toolTrace,
  };
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
    toolsRunning(tools) {
      for (const tool of tools) sse.comment(`tool ${tool}`);
    },
    drained: () => sse.drained(),
  };
  try {
    const outcome = await orchestrator.run(plan, sink, abort);
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

function setCreditHeaders(ctx: Context, credits: ChatCredits | undefined): void {
  if (!credits) return;
  ctx.set('x-credits-charged', String(credits.charged));
  ctx.set('x-credits-remaining', String(credits.remaining));
}

/** The request's abort handle, aborted with ClientCancelled when the client goes away before the response has finished. */
function abortOnDisconnect(ctx: Context): { abort: ChatAbort; dispose(): void } {
  const abort = new ChatAbort();
  const onClose = () => {
    if (!ctx.res.writableFinished) abort.abort(new ClientCancelled());
  };
  ctx.res.once('close', onClose);
  return {
    abort,
    dispose: () => ctx.res.off('close', onClose),
  };
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
