/**
 * The floor for any Koa gateway: a bare proxy that forwards POST /v1/* to an upstream with undici
 * `request` and relays the answer (JSON or SSE) as it streams. No validation, no auth, no logs.
 * Used by bench/chat-overhead.ts as baseline (b).
 *
 * @example
 *   const proxy = await startBareProxy('http://127.0.0.1:8000/v1') // { url, close }
 */
import Koa from 'koa';
import { Agent, request } from 'undici';
import type { AddressInfo } from 'node:net';

export async function startBareProxy(upstreamBase: string): Promise<{ url: string; close(): Promise<void> }> {
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 512 });
  const app = new Koa();
  app.use(async (ctx) => {
    let body = '';
    for await (const piece of ctx.req) body += piece;
    const upstream = await request(`${upstreamBase}${ctx.path.replace(/^\/v1/, '')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      dispatcher: agent,
    });
    ctx.status = upstream.statusCode;
    ctx.type = String(upstream.headers['content-type'] ?? 'application/json');
    upstream.body.on('error', () => {}); // a client that leaves mid-stream must not crash the process (UND_ERR_ABORTED)
    ctx.body = upstream.body;
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => void agent.close().then(() => resolve()))),
  };
}
