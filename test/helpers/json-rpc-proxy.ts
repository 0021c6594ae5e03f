/**
 * An HTTP JSON-RPC proxy on 127.0.0.1 in front of a node, for tests of chain readers: it records
 * every method asked for (batches included), can fail every other request (HTTP 502), and can
 * refuse eth_getLogs over more than a number of blocks the way providers do (-32005).
 *
 * @example
 *   const proxy = await startJsonRpcProxy(node.url)
 *   proxy.failEveryOther = true
 *   // … point a client at proxy.url …
 *   assert.ok(proxy.methods.every((m) => m.startsWith('eth_get')))
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface JsonRpcProxy {
  url: string;
  /** Every method forwarded or failed, in arrival order. */
  methods: string[];
  /** Answer every other HTTP request with 502 instead of forwarding it. */
  failEveryOther: boolean;
  /** HTTP requests answered with 502 so far. */
  failures: number;
  /** Refuse eth_getLogs whose block range is wider than this (undefined: no cap). */
  maxLogRange: number | undefined;
  /** eth_getLogs calls refused for their range. */
  refusedRanges: number;
  close(): Promise<void>;
}

interface RpcCall {
  id: unknown;
  method: string;
  params?: unknown[];
}

export async function startJsonRpcProxy(targetUrl: string): Promise<JsonRpcProxy> {
  let requests = 0;
  const proxy: JsonRpcProxy = {
    url: '',
    methods: [],
    failEveryOther: false,
    failures: 0,
    maxLogRange: undefined,
    refusedRanges: 0,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const tooWide = (call: RpcCall) => {
    if (call.method !== 'eth_getLogs' || proxy.maxLogRange === undefined) return false;
    const filter = (call.params?.[0] ?? {}) as { fromBlock?: string; toBlock?: string };
    if (!filter.fromBlock?.startsWith('0x') || !filter.toBlock?.startsWith('0x')) return false;
    return Number(BigInt(filter.toBlock) - BigInt(filter.fromBlock)) + 1 > proxy.maxLogRange;
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const parsed = JSON.parse(text) as RpcCall | RpcCall[];
      const calls = Array.isArray(parsed) ? parsed : [parsed];
      for (const call of calls) proxy.methods.push(call.method);
      requests++;
      if (proxy.failEveryOther && requests % 2 === 0) {
        proxy.failures++;
        res.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway (test proxy)');
        return;
      }
      if (calls.some(tooWide)) {
        proxy.refusedRanges++;
        const refuse = (call: RpcCall) => ({
          jsonrpc: '2.0',
          id: call.id,
          error: { code: -32005, message: `query exceeds max block range ${proxy.maxLogRange}` },
        });
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(Array.isArray(parsed) ? calls.map(refuse) : refuse(calls[0])));
        return;
      }
      try {
        const upstream = await fetch(targetUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
        res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text());
      } catch {
        res.writeHead(502).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
