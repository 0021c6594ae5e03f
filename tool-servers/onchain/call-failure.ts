/**
 * What a failed call means. Only the contract's own answer (a revert, no code, bytes that do not
 * decode) may become "not a token"; a node that is rate-limited, overloaded or unreachable is an
 * RPC failure, whether it says so with an HTTP status or with a JSON-RPC error inside a 200.
 */
import { BaseError, ContractFunctionExecutionError, HttpRequestError, RpcRequestError, TimeoutError } from 'viem';

/** JSON-RPC codes for "no such method" (-32601) and "method not supported" (EIP-1474, -32004). */
const METHOD_UNSUPPORTED_CODES = [-32601, -32004];

/**
 * True when the contract refused an `eth_call`: it reverted, has no code (returned `0x`) or
 * returned bytes that do not decode as the function's result. Anything else is the node's fault.
 *
 * @example
 *   try { await client.readContract(decimalsCall) } catch (err) { if (!isContractRefusal(err)) throw err }
 */
export function isContractRefusal(err: unknown): boolean {
  if (!(err instanceof BaseError)) return false;
  if (err.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError)) return false;
  const rpc = err.walk((e) => e instanceof RpcRequestError) as RpcRequestError | null;
  // The node answered with a JSON-RPC error: only a revert is the contract's doing. (viem also
  // calls a -32603 "internal error" a revert; rate limits and overload look like that.)
  if (rpc) return isRevert(rpc);
  // No node error at all: the call ran, and what failed is its result (a Multicall3 entry that
  // reverted, empty return data, undecodable bytes).
  return Boolean(err.walk((e) => e instanceof ContractFunctionExecutionError));
}

/** True when the node does not offer the method (so a value can be derived another way). */
export function isMethodUnsupported(err: unknown): boolean {
  if (!(err instanceof BaseError)) return false;
  const rpc = err.walk((e) => e instanceof RpcRequestError) as RpcRequestError | null;
  if (!rpc) return false;
  return (
    METHOD_UNSUPPORTED_CODES.includes(rpc.code) ||
    /(method|eth_\w+).*(not (found|supported|available|implemented)|does not exist|unsupported)/i.test(rpc.details)
  );
}

/**
 * Nodes report a revert as code 3 (geth), as -32603 "VM Exception … reverted" (Hardhat), as
 * -32000 "execution reverted", or with the revert data attached.
 */
function isRevert(rpc: RpcRequestError): boolean {
  if (rpc.code === 3) return true;
  const data: unknown = rpc.data;
  const dataText = typeof data === 'string' ? data : typeof data === 'object' && data !== null && 'data' in data ? String(data.data) : '';
  return /revert/i.test(rpc.details) || /revert/i.test(dataText) || /^0x[0-9a-f]{8,}$/i.test(dataText);
}
