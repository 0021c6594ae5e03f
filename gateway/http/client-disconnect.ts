/**
 * A client that goes away stops the work done for it at once: a long answer (a chat completion, a
 * response) through `answerUnlessClientLeaves`, which also logs the request as 499 (client closed
 * request) with nothing more sent; a tool call through `clientGoneSignal`; reading a body through
 * `unlessClientLeaves`. Each notices a client that already left during an earlier step (a
 * payment, a slot, the body): its 'close' has fired and will not fire again.
 *
 * @example
 *   await answerUnlessClientLeaves(ctx, (abort) => orchestrator.run(plan, sink, abort))
 *   await tools.callTool(name, args, { signal: clientGoneSignal(ctx) })
 */
import type { Context } from 'koa';
import { ChatAbort } from '../chat/chat-abort.js';
import { ClientCancelled } from '../chat/upstream-errors.js';

export async function answerUnlessClientLeaves(ctx: Context, answer: (abort: ChatAbort) => Promise<void>): Promise<void> {
  const abort = new ChatAbort();
  const stopWatching = whenClientGone(ctx, () => abort.abort(new ClientCancelled()));
  try {
    await answer(abort);
  } catch (err) {
    if (!(err instanceof ClientCancelled)) throw err;
    // Nobody is listening: 499 for the request log and metrics, nothing sent. After a stream's
    // headers went out Koa ignores a new status, so the response's own is set.
    if (ctx.headerSent) ctx.res.statusCode = 499;
    else ctx.status = 499;
    ctx.respond = false;
    if (!ctx.res.destroyed) ctx.res.destroy();
  } finally {
    stopWatching();
  }
}

/** Aborted when the client goes away before its answer is written (or has already). */
export function clientGoneSignal(ctx: Context): AbortSignal {
  const gone = new AbortController();
  // The request's own listener: it lives no longer than the request, so it is never removed.
  whenClientGone(ctx, () => gone.abort(new Error('client disconnected')));
  return gone.signal;
}

/** `work`'s outcome, or `gone()` thrown as soon as the client goes away first (or has gone already). */
export function unlessClientLeaves<T>(ctx: Context, work: Promise<T>, gone: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const stopWatching = whenClientGone(ctx, () => reject(gone()));
    work.then(resolve, reject).finally(stopWatching);
  });
}

/** Run `left` once the client closes the connection before its answer is written, or now if it has; returns the unsubscribe. */
function whenClientGone(ctx: Context, left: () => void): () => void {
  const onClose = () => {
    if (!ctx.res.writableFinished) left();
  };
  ctx.res.once('close', onClose);
  if (ctx.res.destroyed) onClose();
  return () => ctx.res.off('close', onClose);
}
