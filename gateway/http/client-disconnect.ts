/**
 * Runs a long answer (a chat completion, a response) so that a client who goes away aborts it at
 * once: the upstream call and the running tool calls stop, and the request is logged as 499
 * (client closed request) with nothing more sent.
 *
 * @example
 *   await answerUnlessClientLeaves(ctx, (abort) => orchestrator.run(plan, sink, abort))
 */
import type { Context } from 'koa';
import { ChatAbort } from '../chat/chat-abort.js';
import { ClientCancelled } from '../chat/upstream-errors.js';

export async function answerUnlessClientLeaves(ctx: Context, answer: (abort: ChatAbort) => Promise<void>): Promise<void> {
  const abort = new ChatAbort();
  const onClose = () => {
    if (!ctx.res.writableFinished) abort.abort(new ClientCancelled());
  };
  ctx.res.once('close', onClose);
  // Gone already, during a step before this one (a payment, a slot): 'close' will not fire again.
  if (ctx.res.destroyed) onClose();
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
    ctx.res.off('close', onClose);
  }
}
