/**
 * One place where viem's failures become ToolErrors. A dead RPC is `upstream_unavailable`
 * naming the chain, never a zero balance, and never with a URL's secret part.
 */
import { BaseError, HttpRequestError, RpcRequestError, TimeoutError } from 'viem';
import { ToolError } from '../kit/index.js';
import type { ChainConfig } from './chains.js';
import { redactUrlsIn } from './url-redaction.js';

/** A node's own message is shown (the model and the operator need "rate limited"), but short. */
const NODE_MESSAGE_MAX_CHARS = 160;

/**
 * @example
 *   try { await client.getBalance({ address }) } catch (err) { throw toToolError(err, chain) }
 */
export function toToolError(err: unknown, chain: ChainConfig): ToolError {
  if (err instanceof ToolError) return err;
  const reason = redactUrlsIn(describeRpcFailure(err), chain.rpcUrls).replace(/[.\s]+$/, '');
  return new ToolError('upstream_unavailable', `RPC unavailable for ${chain.name}: ${reason}.`, { cause: err });
}

/**
 * A short reason for logs and messages: status, timeout, refused, or the node's own error.
 *
 * @example
 *   describeRpcFailure(rateLimited) // 'node error -32005: daily request count exceeded, request rate limited'
 */
export function describeRpcFailure(err: unknown): string {
  if (!(err instanceof BaseError)) return 'unexpected failure';
  const timeout = err.walk((e) => e instanceof TimeoutError);
  if (timeout) return 'request timed out';
  const http = err.walk((e) => e instanceof HttpRequestError) as HttpRequestError | null;
  if (http) {
    if (http.status) return `HTTP ${http.status}`;
    const cause = http.cause as { cause?: { code?: string }; code?: string } | undefined;
    const code = cause?.cause?.code ?? cause?.code;
    return code ? `connection failed (${code})` : 'connection failed';
  }
  const rpc = err.walk((e) => e instanceof RpcRequestError) as RpcRequestError | null;
  if (rpc) {
    // `details` is the node's message; viem's shortMessage is only "RPC Request failed."
    const said = shorten(rpc.details);
    return said ? `node error ${rpc.code}: ${said}` : `node error ${rpc.code}`;
  }
  return shorten(err.shortMessage) || 'unexpected failure';
}

function shorten(text: string | undefined): string {
  const line = (text ?? '')
    .split('\n')[0]
    .trim()
    .replace(/[.\s]+$/, '');
  return line.length > NODE_MESSAGE_MAX_CHARS ? `${line.slice(0, NODE_MESSAGE_MAX_CHARS - 1)}…` : line;
}
