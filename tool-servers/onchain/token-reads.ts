/**
 * ERC-20 reads: metadata (immutable, cached long) and supply/balances (moving). Several reads go
 * out as one Multicall3 `aggregate3` where the chain has Multicall3, else as one JSON-RPC batch.
 */
import { erc20Abi, type Address, type PublicClient } from 'viem';
import { ToolError } from '../kit/index.js';
import { isContractRefusal } from './call-failure.js';
import type { ChainConfig } from './chains.js';
import type { OnchainContext } from './onchain-context.js';

export interface TokenMetadata {
  address: Address;
  name: string | null;
  symbol: string | null;
  decimals: number;
}

type Erc20Read = 'name' | 'symbol' | 'decimals' | 'totalSupply' | { balanceOf: Address };

/** Outcome of one read: the value, or null when the contract did not answer it. */
type ReadResult = unknown | null;

/**
 * Metadata of a token, cached for a day. A contract that does not answer `decimals()` is not an
 * ERC-20: `not_found`.
 *
 * @example
 *   const { symbol, decimals } = await readTokenMetadata(context, chain, usdc)
 */
export async function readTokenMetadata(context: OnchainContext, chain: ChainConfig, token: Address): Promise<TokenMetadata> {
  return context.read(chain, `token:meta:${token}`, context.immutableTtlMs, async (client) => {
    const [name, symbol, decimals] = await readErc20(client, chain, token, ['name', 'symbol', 'decimals']);
    return toMetadata(chain, token, name, symbol, decimals);
  });
}

/** Metadata plus total supply in one round trip when the metadata is not cached yet. */
export async function readTokenInfo(
  context: OnchainContext,
  chain: ChainConfig,
  token: Address,
): Promise<TokenMetadata & { totalSupply: bigint }> {
  return context.read(chain, `token:info:${token}`, context.movingTtlMs(chain), async (client) => {
    const cachedMeta = context.cache.peek<TokenMetadata>(`${chain.id}:token:meta:${token}`);
    if (cachedMeta) {
      const [totalSupply] = await readErc20(client, chain, token, ['totalSupply']);
      if (typeof totalSupply !== 'bigint') throw notAToken(chain, token);
      return { ...cachedMeta, totalSupply };
    }
    const [name, symbol, decimals, totalSupply] = await readErc20(client, chain, token, ['name', 'symbol', 'decimals', 'totalSupply']);
    const meta = toMetadata(chain, token, name, symbol, decimals);
    if (typeof totalSupply !== 'bigint') throw notAToken(chain, token);
    context.cache.set(`${chain.id}:token:meta:${token}`, meta, context.immutableTtlMs);
    return { ...meta, totalSupply };
  });
}

/** `balanceOf(holder)`, cached at most one block time. */
export async function readTokenBalance(context: OnchainContext, chain: ChainConfig, token: Address, holder: Address): Promise<bigint> {
  return context.read(chain, `token:balance:${token}:${holder}`, context.movingTtlMs(chain), async (client) => {
    const [balance] = await readErc20(client, chain, token, [{ balanceOf: holder }]);
    if (typeof balance !== 'bigint') throw notAToken(chain, token);
    return balance;
  });
}

function toMetadata(chain: ChainConfig, token: Address, name: ReadResult, symbol: ReadResult, decimals: ReadResult): TokenMetadata {
  if (typeof decimals !== 'number') throw notAToken(chain, token);
  return { address: token, name: typeof name === 'string' ? name : null, symbol: typeof symbol === 'string' ? symbol : null, decimals };
}

function notAToken(chain: ChainConfig, token: Address): ToolError {
  return new ToolError('not_found', `No ERC-20 token at ${token} on ${chain.name}.`, { param: 'token' });
}

/**
 * Read several ERC-20 functions at once. A read the contract refuses gives null; any other failure
 * throws (so a dead or rate-limited node is never mistaken for "not a token").
 */
async function readErc20(client: PublicClient, chain: ChainConfig, token: Address, reads: Erc20Read[]): Promise<ReadResult[]> {
  const contracts = reads.map((read) =>
    typeof read === 'string'
      ? ({ address: token, abi: erc20Abi, functionName: read } as const)
      : ({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [read.balanceOf] } as const),
  );
  if (chain.multicall3) {
    const results = await client.multicall({ contracts, allowFailure: true, multicallAddress: chain.multicall3 });
    return results.map((result) => {
      if (result.status === 'success') return result.result;
      // viem reports a failed aggregate3 call (node unreachable, rate-limited) as a failure of every entry.
      if (!isContractRefusal(result.error)) throw result.error;
      return null;
    });
  }
  // No Multicall3: the reads leave together in one JSON-RPC batch (the transport batches).
  return Promise.all(
    contracts.map(async (contract) => {
      try {
        return (await client.readContract(contract)) as unknown;
      } catch (err) {
        if (!isContractRefusal(err)) throw err;
        return null;
      }
    }),
  );
}
