/**
 * One place where viem's failures become ToolErrors. A dead RPC is `upstream_unavailable`
 * naming the chain, never a zero balance, and never with a URL's secret part.
 */
import { BaseError, HttpRequestError, RpcRequestError, TimeoutError } from 'viem';
import { ToolError } from '../kit/index.js';
import type { ChainConfig } from './chains.js';
import { redactUrlsIn } from './url-redaction.js';

/**
 * @example
 *   try { await client.getBalance({ address }) } catch (err) { throw toToolError(err, chain) }
 */
export function toToolError(err: unknown, chain: ChainConfig): ToolError {
  if (err instanceof ToolError) return err;
  const reason = redactUrlsIn(describeRpcFailure(err), chain.rpcUrls);
  return new ToolError('upstream_unavailable', `RPC unavailable for ${chain.name}: ${reason}.`, { cause: err });
}

/** A short reason for logs and messages: status, timeout, refused, or the node's own error. */
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
  if (rpc) return `node error ${rpc.code}: ${rpc.shortMessage.split('\n')[0]}`;
  return err.shortMessage.split('\n')[0] || 'unexpected failure';
}
