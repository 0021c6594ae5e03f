import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { z } from 'zod';
import { createServer, envFlag, envInt, parseServerEnv, type Logger, type ServerEnv } from '../kit/index.js';
import { buildChainRegistry, loadChains } from './chains.js';
import { createOnchainContext, DEFAULT_RPC_DEADLINE_MS } from './onchain-context.js';
import { DEFAULT_RPC_TIMEOUT_MS } from '../../chains/rpc-transport.js';
import { onchainTools } from './tools/index.js';

export interface OnchainServerOptions {
  /**
   * Read here, never from process.env: `CHAINS_CONFIG`, `RPC_URL_<CHAIN>`, `MULTICALL3_<CHAIN>`,
   * `ENS_UNIVERSAL_RESOLVER_<CHAIN>`, `TOKENS_<CHAIN>`, `RPC_TIMEOUT_MS`, `RPC_DEADLINE_MS`,
   * `RPC_RANK`, `ONCHAIN_CACHE_MAX_TTL_MS`.
   */
  env: ServerEnv;
  logger?: Logger;
  /** An already-parsed chain list instead of reading CHAINS_CONFIG (tests). */
  chains?: unknown;
}

// The per-chain variables (`RPC_URL_<CHAIN>`, …) are named by the chain list: chains.ts reads them.
export const onchainEnvSchema = z.object({
  RPC_TIMEOUT_MS: envInt({ min: 1 })
    .default(DEFAULT_RPC_TIMEOUT_MS)
    .describe('Timeout of each RPC request; a slow URL counts as failed and the next one is tried'),
  RPC_DEADLINE_MS: envInt({ min: 1 })
    .default(DEFAULT_RPC_DEADLINE_MS)
    .describe("Total RPC time of one tool call (all URLs, all its reads); keep it under the gateway's tool timeout (30 s)"),
  RPC_RANK: envFlag()
    .default(false)
    .describe(
      "`true`: re-rank a chain's URLs by latency and stability with a `net_listening` ping to each every 60 s, once the chain is used",
    ),
  ONCHAIN_CACHE_MAX_TTL_MS: envInt({ min: 0 }).optional().meta({
    description: 'Upper bound on caching balances, gas, blocks by number (0 = no cache; calls still coalesce)',
    docDefault: 'unset (one block time)',
  }),
});

/**
 * The `onchain` tool server: nine read-only EVM tools over viem. Nothing can sign or send.
 *
 * @example
 *   const server = createOnchainServer({ env: { RPC_URL_LOCAL: 'http://127.0.0.1:8545' } })
 *   await server.connect(transport)
 */
export function createOnchainServer(options: OnchainServerOptions): Server {
  const { env } = options;
  const settings = parseServerEnv('onchain', onchainEnvSchema, env);
  const chains = options.chains === undefined ? loadChains(env) : buildChainRegistry(options.chains, env);
  const context = createOnchainContext({
    chains,
    logger: options.logger,
    transport: { timeoutMs: settings.RPC_TIMEOUT_MS, rank: settings.RPC_RANK },
    deadlineMs: settings.RPC_DEADLINE_MS,
    maxMovingTtlMs: settings.ONCHAIN_CACHE_MAX_TTL_MS,
  });
  return createServer({ name: 'switchyard-onchain', version: '0.1.0', tools: onchainTools(context), logger: options.logger });
}
