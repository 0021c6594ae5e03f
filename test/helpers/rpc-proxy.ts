/**
 * A loopback JSON-RPC proxy in front of the local node that counts what passes through (HTTP
 * requests and JSON-RPC calls per method, batches unpacked), so tests can see coalescing,
 * batching and fallback from the outside. `answer` may reply to chosen calls itself (a
 * rate-limited node, a node without a method, a provider's range cap); the rest go to the node.
 * `failEveryOther` makes it a flaky RPC: every second HTTP request gets 502.
 */
import { createServer, type Server } from 'node:http';

export interface JsonRpcCall {
  jsonrpc: '2.0';
  id: number | string;
  method: string;
  params?: unknown[];
}

export type JsonRpcAnswer = { jsonrpc: '2.0'; id: number | string } & (
  { result: unknown } | { error: { code: number; message: string; data?: unknown } }
);

export interface RpcProxyOptions {
  /** An answer for this call (sent with HTTP 200), or undefined to pass it to the node. */
  answer?: (call: JsonRpcCall) => JsonRpcAnswer | undefined;
}

export interface RpcProxy {
  url: string;
  httpRequests: number;
  calls: Record<string, number>;
  callCount(method: string): number;
  /** Answer every other HTTP request with 502 instead of forwarding it. */
  failEveryOther: boolean;
  /** HTTP requests answered with 502 so far. */
  failures: number;
  reset(): void;
  close(): Promise<void>;
}

export async function startRpcProxy(target: string, options: RpcProxyOptions = {}): Promise<RpcProxy> {
  const proxy: RpcProxy = {
    url: '',
    httpRequests: 0,
    calls: {},
    callCount: (method) => proxy.calls[method] ?? 0,
    failEveryOther: false,
    failures: 0,
    reset() {
      proxy.httpRequests = 0;
      proxy.calls = {};
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
  const forward = async (body: string) => {
    const upstream = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return { status: upstream.status, text: await upstream.text() };
  };
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    proxy.httpRequests++;
    const parsed = JSON.parse(body) as JsonRpcCall | JsonRpcCall[];
    const calls = Array.isArray(parsed) ? parsed : [parsed];
    for (const call of calls) proxy.calls[call.method] = (proxy.calls[call.method] ?? 0) + 1;
    if (proxy.failEveryOther && proxy.httpRequests % 2 === 0) {
      proxy.failures++;
      res.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway (test proxy)');
      return;
    }
    const own = calls.map((call) => options.answer?.(call));
    if (own.every((answer) => answer === undefined)) {
      const upstream = await forward(body);
      res.writeHead(upstream.status, { 'content-type': 'application/json' });
      res.end(upstream.text);
      return;
    }
    // Some calls answered here: send the others to the node as one batch and merge by id.
    const rest = calls.filter((_call, i) => own[i] === undefined);
    const fromNode = rest.length > 0 ? (JSON.parse((await forward(JSON.stringify(rest))).text) as JsonRpcAnswer[]) : [];
    const answers = calls.map((call, i) => own[i] ?? fromNode.find((answer) => answer.id === call.id));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(Array.isArray(parsed) ? answers : answers[0]));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const address = server.address();
  proxy.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return proxy;
}
