import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { createServer, type Logger } from '../kit/index.js';
import { buildChainRegistry, loadChains } from './chains.js';
import { createOnchainContext, DEFAULT_RPC_DEADLINE_MS } from './onchain-context.js';
import { DEFAULT_RPC_TIMEOUT_MS } from './rpc-transport.js';
import { onchainTools } from './tools/index.js';

export interface OnchainServerOptions {
  /**
   * Read here, never from process.env: `CHAINS_CONFIG`, `RPC_URL_<CHAIN>`, `MULTICALL3_<CHAIN>`,
   * `ENS_UNIVERSAL_RESOLVER_<CHAIN>`, `TOKENS_<CHAIN>`, `RPC_TIMEOUT_MS`, `RPC_DEADLINE_MS`,
   * `RPC_RANK`, `ONCHAIN_CACHE_MAX_TTL_MS`.
   */
  env: Record<string, string | undefined>;
  logger?: Logger;
  /** An already-parsed chain list instead of reading CHAINS_CONFIG (tests). */
  chains?: unknown;
}

/**
 * The `onchain` tool server: nine read-only EVM tools over viem. Nothing can sign or send.
 *
 * @example
 *   const server = createOnchainServer({ env: { RPC_URL_LOCAL: 'http://127.0.0.1:8545' } })
 *   await server.connect(transport)
 */
export function createOnchainServer(options: OnchainServerOptions): Server {
  const { env } = options;
  const chains = options.chains === undefined ? loadChains(env) : buildChainRegistry(options.chains, env);
  const context = createOnchainContext({
    chains,
    logger: options.logger,
    transport: { timeoutMs: positiveInt(env.RPC_TIMEOUT_MS, 'RPC_TIMEOUT_MS') ?? DEFAULT_RPC_TIMEOUT_MS, rank: flag(env.RPC_RANK, 'RPC_RANK') },
    deadlineMs: positiveInt(env.RPC_DEADLINE_MS, 'RPC_DEADLINE_MS') ?? DEFAULT_RPC_DEADLINE_MS,
    maxMovingTtlMs: positiveInt(env.ONCHAIN_CACHE_MAX_TTL_MS, 'ONCHAIN_CACHE_MAX_TTL_MS', true),
  });
  return createServer({ name: 'switchyard-onchain', version: '0.1.0', tools: onchainTools(context), logger: options.logger });
}

function positiveInt(value: string | undefined, name: string, allowZero = false): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < (allowZero ? 0 : 1)) throw new Error(`${name} must be a ${allowZero ? 'non-negative' : 'positive'} integer`);
  return n;
}

function flag(value: string | undefined, name: string): boolean {
  if (value === undefined || value === '' || value === 'false') return false;
  if (value === 'true') return true;
  throw new Error(`${name} must be true or false`);
}
