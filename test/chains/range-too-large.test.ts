/**
 * isRangeTooLarge on the errors providers really send for an eth_getLogs over their cap (and for a
 * rate limit, which is not one), as viem hands them over: the JSON-RPC error as a cause, or an
 * HTTP error whose details hold the body.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpRequestError, InvalidParamsRpcError, LimitExceededRpcError, RpcRequestError } from 'viem';
import { isRangeTooLarge } from '../../chains/page-range.js';

const URL = 'http://127.0.0.1:8545';

/** An error as viem's http transport throws it for a JSON-RPC error answered with HTTP 200. */
function rpcError(error: { code: number; message: string; data?: unknown }) {
  const cause = new RpcRequestError({ body: { method: 'eth_getLogs' }, error, url: URL });
  if (error.code === -32602) return new InvalidParamsRpcError(cause);
  if (error.code === -32005) return new LimitExceededRpcError(cause);
  return cause;
}

test('a provider cap on the range or on the results is a range to shrink', () => {
  // Infura, live (INFURA/infura#237).
  assert.equal(isRangeTooLarge(rpcError({ code: -32602, message: 'range 1000000 exceeds limit of 10000' })), true);
  // Infura, documented: too many results.
  assert.equal(isRangeTooLarge(rpcError({ code: -32005, message: 'query returned more than 10000 results' })), true);
  // Public BSC nodes: the bare EIP-1474 code.
  assert.equal(isRangeTooLarge(rpcError({ code: -32005, message: 'limit exceeded' })), true);
  // Tenderly: the words are in `data`.
  const tenderly = { error_id: '4ed94073', payload: 'range 9009594 is bigger than range limit 2000' };
  assert.equal(isRangeTooLarge(rpcError({ code: -32602, message: 'invalid params', data: tenderly })), true);
  // A node that says so plainly.
  assert.equal(isRangeTooLarge(rpcError({ code: -32600, message: 'block range too high' })), true);
  // QuickNode answers HTTP 413 with a JSON-RPC error body, which viem hands over as that error.
  assert.equal(isRangeTooLarge(rpcError({ code: -32614, message: 'eth_getLogs is limited to a 10,000 range' })), true);
});

test('a rate limit, or any other failure, is not', () => {
  // Infura's rate limit shares -32005 with its result cap.
  const limited = { code: -32005, message: 'daily request count exceeded, request rate limited', data: { rate: { allowed_rps: 1 } } };
  assert.equal(isRangeTooLarge(rpcError(limited)), false);
  assert.equal(isRangeTooLarge(rpcError({ code: -32005, message: 'project ID request rate exceeded' })), false);
  // A backend behind the head: a later pass helps, fewer blocks do not.
  assert.equal(isRangeTooLarge(rpcError({ code: -32000, message: 'block range extends beyond current head block' })), false);
  assert.equal(isRangeTooLarge(new HttpRequestError({ url: URL, status: 429, details: 'Too Many Requests' })), false);
  assert.equal(isRangeTooLarge(rpcError({ code: -32602, message: 'invalid argument 0: hex string without 0x prefix' })), false);
  assert.equal(isRangeTooLarge(new Error('fetch failed')), false);
  assert.equal(isRangeTooLarge(undefined), false);
});
