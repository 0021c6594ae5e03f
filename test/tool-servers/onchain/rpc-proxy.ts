/**
 * A loopback JSON-RPC proxy in front of the local node that counts what passes through (HTTP
 * requests and JSON-RPC calls per method, batches unpacked), so tests can see coalescing,
 * batching and fallback from the outside.
 */
import { createServer, type Server } from 'node:http';

export interface RpcProxy {
  url: string;
  httpRequests: number;
  calls: Record<string, number>;
  callCount(method: string): number;
  reset(): void;
  close(): Promise<void>;
}

export async function startRpcProxy(target: string): Promise<RpcProxy> {
  const proxy: RpcProxy = {
    url: '',
    httpRequests: 0,
    calls: {},
    callCount: (method) => proxy.calls[method] ?? 0,
    reset() {
      proxy.httpRequests = 0;
      proxy.calls = {};
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    proxy.httpRequests++;
    const parsed = JSON.parse(body) as { method: string } | Array<{ method: string }>;
    for (const call of Array.isArray(parsed) ? parsed : [parsed]) proxy.calls[call.method] = (proxy.calls[call.method] ?? 0) + 1;
    const upstream = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    res.writeHead(upstream.status, { 'content-type': 'application/json' });
    res.end(await upstream.text());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const address = server.address();
  proxy.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return proxy;
}
