/**
 * ChainClient's policies against a local Hardhat node behind a counting proxy: a retry count is
 * that many more tries of the one URL, `'fallback'` goes on to the chain's next URL, a request
 * slower than the timeout fails, and `observed` gives a client of its own whose hooks see every
 * HTTP request and answer (and only its own).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ChainClient } from '../../chains/chain-client.js';
import { startEvmNode, type EvmNode } from '../helpers/evm-node.js';
import { startRpcProxy, type RpcProxy } from '../helpers/rpc-proxy.js';

let node: EvmNode;
let proxy: RpcProxy;

before(async () => {
  node = await startEvmNode();
  proxy = await startRpcProxy(node.url);
});
after(async () => {
  await proxy?.close();
  await node?.stop();
});

/** A chain-id read that nothing caches, so every call is one JSON-RPC request. */
const chainId = (chain: ChainClient) => chain.viem.request({ method: 'eth_chainId' });

/** Make the proxy's next HTTP request fail with 502 (it fails every second one). */
async function nextRequestFails(): Promise<void> {
  proxy.failEveryOther = false;
  proxy.reset();
  await fetch(proxy.url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }) });
  proxy.failEveryOther = true;
}

test('retries: 1 tries a failed request once more on its URL', async () => {
  const chain = new ChainClient([proxy.url], { timeoutMs: 5_000, retries: 1 });
  await nextRequestFails();
  assert.equal(await chainId(chain), '0x7a69');
  assert.equal(proxy.httpRequests, 3, 'the warm-up, the 502, and the retry');
});

test('retries: 0 gives up at the first failure', async () => {
  const chain = new ChainClient([proxy.url], { timeoutMs: 5_000, retries: 0 });
  await nextRequestFails();
  await assert.rejects(chainId(chain), { name: 'HttpRequestError' });
  assert.equal(proxy.httpRequests, 2);
});

test("'fallback' reads from the chain's next URL when one is down", async () => {
  proxy.failEveryOther = false;
  proxy.reset();
  const chain = new ChainClient(['http://127.0.0.1:9', proxy.url], { timeoutMs: 5_000, retries: 'fallback' });
  assert.equal(await chainId(chain), '0x7a69');
  assert.equal(proxy.callCount('eth_chainId'), 1);
});

test('a request slower than timeoutMs fails with a timeout', async () => {
  // A node that takes the request and never answers.
  const sockets = new Set<Socket>();
  const silent: Server = createServer(() => {});
  silent.on('connection', (socket) => sockets.add(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const chain = new ChainClient([url], { timeoutMs: 200, retries: 0 });
    await assert.rejects(chainId(chain), { name: 'TimeoutError' });
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  }
});

test('observed: a client of its own on the same policy, whose hooks see each request and answer', async () => {
  const chain = new ChainClient([proxy.url], { timeoutMs: 5_000, retries: 1 });
  let asked = 0;
  let answered = 0;
  const counted = chain.observed({
    onFetchRequest: () => void asked++,
    onFetchResponse: (response) => void (response.ok && answered++),
  });
  await nextRequestFails();
  assert.equal(await counted.request({ method: 'eth_chainId' }), '0x7a69');
  assert.deepEqual({ asked, answered }, { asked: 2, answered: 1 }, 'the 502 and its retry');
  proxy.failEveryOther = false;
  await chainId(chain);
  assert.deepEqual({ asked, answered }, { asked: 2, answered: 1 }, 'the shared client is not counted');
});

test('a retry count is a policy for one URL, and a client needs one', () => {
  assert.throws(
    () => new ChainClient(['http://127.0.0.1:1', 'http://127.0.0.1:2'], { timeoutMs: 1_000, retries: 1 }),
    /policy for one URL/,
  );
  assert.throws(() => new ChainClient([], { timeoutMs: 1_000, retries: 'fallback' }), /needs an RPC URL/);
});
