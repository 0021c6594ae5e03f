/**
 * answerUnlessClientLeaves and clientGoneSignal on a real HTTP server: a client that leaves while
 * the work runs aborts it, and so does one that left during an earlier step, before it began.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { answerUnlessClientLeaves, clientGoneSignal } from '../../../gateway/http/client-disconnect.js';
import type { ChatAbort } from '../../../gateway/chat/chat-abort.js';

/** Serve one request whose answer waits for its abort (or 2 s); resolves with whether it was aborted. */
async function oneRequest(options: { leaveBeforeAnswer: boolean; through: 'answer' | 'signal' }): Promise<boolean> {
  let outcome!: (aborted: boolean) => void;
  const result = new Promise<boolean>((resolve) => (outcome = resolve));
  let clientGone!: () => void;
  const gone = new Promise<void>((resolve) => (clientGone = resolve));
  const app = new Koa();
  app.use(async (ctx) => {
    ctx.res.once('close', () => clientGone());
    // An earlier step (a payment, a chat slot) that takes its time: the client leaves meanwhile.
    if (options.leaveBeforeAnswer) await gone;
    if (options.through === 'signal') {
      const signal = clientGoneSignal(ctx);
      outcome(
        await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), 2_000);
          const aborted = () => {
            clearTimeout(timer);
            resolve(true);
          };
          if (signal.aborted) aborted();
          else signal.addEventListener('abort', aborted, { once: true });
        }),
      );
      return;
    }
    await answerUnlessClientLeaves(ctx, async (abort: ChatAbort) => {
      const aborted = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), 2_000);
        abort.emitter.once('abort', () => {
          clearTimeout(timer);
          resolve(true);
        });
        if (abort.aborted) {
          clearTimeout(timer);
          resolve(true);
        }
      });
      outcome(aborted);
      ctx.body = { ok: true };
    });
  });
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const client = request({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, path: '/', method: 'POST' });
    client.on('error', () => {});
    client.end('{}');
    await new Promise((resolve) => setTimeout(resolve, 100));
    client.destroy();
    return await result;
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

for (const through of ['answer', 'signal'] as const) {
  test(`${through}: a client that leaves while the work runs aborts it`, async () => {
    assert.equal(await oneRequest({ leaveBeforeAnswer: false, through }), true);
  });

  test(`${through}: a client that left during an earlier step aborts the work at once`, async () => {
    assert.equal(await oneRequest({ leaveBeforeAnswer: true, through }), true);
  });
}
