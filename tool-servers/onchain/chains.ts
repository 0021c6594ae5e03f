/**
 * The onchain server's view of the chain list (chains/chain-list.ts): lookup by name, alias or
 * numeric id; an unknown chain is refused as a tool error, never silently mapped to chain 1.
 */
import { ToolError } from '../kit/index.js';
import { parseChainList, readChainList, type ChainConfig } from '../../chains/chain-list.js';

export type { ChainConfig };

export interface ChainRegistry {
  list: ChainConfig[];
  /** Resolve a name, alias or numeric id; throws `invalid_arguments` listing supported chains. */
  resolve(chain: string | number | undefined): ChainConfig;
}

export const DEFAULT_CHAIN = 'ethereum';

/**
 * Load and validate the chain list and apply env overrides.
 *
 * @example
 *   const chains = loadChains(process.env)
 *   chains.resolve('arb').id // 42161
 */
export function loadChains(env: Record<string, string | undefined>, path?: string): ChainRegistry {
  return registryOf(readChainList(env, path));
}

/** Validate an already-parsed chain list and apply env overrides. */
export function buildChainRegistry(raw: unknown, env: Record<string, string | undefined>): ChainRegistry {
  return registryOf(parseChainList(raw, env));
}

function registryOf(list: ChainConfig[]): ChainRegistry {
  const byKey = new Map<string, ChainConfig>();
  for (const chain of list) {
    for (const name of [chain.key, ...chain.aliases, String(chain.id)]) byKey.set(name.toLowerCase(), chain);
  }
  const supported = list.map((c) => c.key).join(', ');
  return {
    list,
    resolve(chain) {
      const wanted = String(chain ?? DEFAULT_CHAIN)
        .trim()
        .toLowerCase();
      const found = byKey.get(wanted);
      if (!found)
        throw new ToolError('invalid_arguments', `Unknown chain "${String(chain)}". Supported chains: ${supported}.`, { param: 'chain' });
      return found;
    },
  };
}
