/**
 * ENS on the chain whose config has a Universal Resolver (ethereum by default): forward
 * resolution with ENSIP-15 normalization, reverse resolution that is trusted only when the name
 * resolves forward to the same address, and the "address or ENS name" argument of other tools.
 */
import type { Address } from 'viem';
import { normalize } from 'viem/ens';
import { ToolError } from '../kit/index.js';
import type { ChainConfig } from './chains.js';
import { looksLikeEnsName, parseAddress } from './arguments.js';
import type { OnchainContext } from './onchain-context.js';

/** The chain ENS lookups run on for a request on `chain`: itself if it has ENS, else ethereum. */
export function ensChainFor(context: OnchainContext, chain: ChainConfig): ChainConfig {
  if (chain.ens) return chain;
  const fallbackChain = context.chains.resolve('ethereum');
  if (!fallbackChain.ens)
    throw new ToolError('invalid_arguments', `ENS is not configured for ${chain.name} or Ethereum.`, { param: 'chain' });
  return fallbackChain;
}

/**
 * ENSIP-15 normalization; an invalid name is `invalid_arguments`.
 *
 * @example
 *   normalizeEnsName('Nick.ETH', 'name') // 'nick.eth'
 */
export function normalizeEnsName(name: string, param: string): string {
  let normalized: string;
  try {
    normalized = normalize(name.trim());
  } catch (err) {
    throw new ToolError('invalid_arguments', `${param}: "${name}" is not a valid ENS name (${(err as Error).message.split('\n')[0]}).`, {
      param,
    });
  }
  if (!normalized.includes('.') || normalized.split('.').some((label) => label.length === 0)) {
    throw new ToolError('invalid_arguments', `${param}: "${name}" is not a valid ENS name.`, { param });
  }
  return normalized;
}

/** Forward resolution: the address an (already normalized) name points to, or null. */
export async function resolveEnsAddress(context: OnchainContext, chain: ChainConfig, name: string): Promise<Address | null> {
  const ensChain = ensChainFor(context, chain);
  const resolver = ensChain.ens!.universalResolver;
  return context.read(ensChain, `ens:addr:${name}`, context.movingTtlMs(ensChain), (client) =>
    client.getEnsAddress({ name, universalResolverAddress: resolver }),
  );
}

/**
 * Reverse resolution: the primary name of `address`, or null when there is none or when that
 * name does not resolve forward to the same address (a reverse record anyone could have set).
 */
export async function resolveEnsName(context: OnchainContext, chain: ChainConfig, address: Address): Promise<string | null> {
  const ensChain = ensChainFor(context, chain);
  const resolver = ensChain.ens!.universalResolver;
  const claimed = await context.read(ensChain, `ens:name:${address}`, context.movingTtlMs(ensChain), (client) =>
    client.getEnsName({ address, universalResolverAddress: resolver }),
  );
  if (!claimed) return null;
  let normalized: string;
  try {
    normalized = normalize(claimed);
  } catch {
    return null;
  }
  const forward = await resolveEnsAddress(context, ensChain, normalized);
  return forward && forward.toLowerCase() === address.toLowerCase() ? normalized : null;
}

/** Where an address came from when the caller gave an ENS name. */
export interface ResolvedFrom {
  name: string;
  /** Display name of the chain whose ENS answered (Ethereum when the asked chain has none). */
  chain: string;
}

/**
 * An `address` argument that may be an ENS name: names resolve forward (no address → not_found).
 *
 * @example
 *   const { address, resolvedFrom } = await addressOrEnsName(context, base, 'vitalik.eth', 'address')
 *   // resolvedFrom: { name: 'vitalik.eth', chain: 'Ethereum' }
 */
export async function addressOrEnsName(
  context: OnchainContext,
  chain: ChainConfig,
  value: string,
  param: string,
): Promise<{ address: Address; resolvedFrom: ResolvedFrom | null }> {
  if (!looksLikeEnsName(value)) return { address: parseAddress(value, param), resolvedFrom: null };
  const name = normalizeEnsName(value, param);
  const address = await resolveEnsAddress(context, chain, name);
  if (!address) throw new ToolError('not_found', `ENS name "${name}" does not resolve to an address.`, { param });
  return { address, resolvedFrom: { name, chain: ensChainFor(context, chain).name } };
}
