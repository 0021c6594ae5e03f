/**
 * The chain list, shared by the gateway (the deposit watcher) and the onchain tool server, which
 * import this folder and never each other: `config/chains.json` parsed with zod, then the
 * environment's overrides applied (`RPC_URL_<CHAIN>`, `MULTICALL3_<CHAIN>`,
 * `ENS_UNIVERSAL_RESOLVER_<CHAIN>`, `TOKENS_<CHAIN>`). Errors are plain Errors naming the file or
 * variable; each reader decides what they mean to it.
 *
 * @example
 *   const chains = readChainList(process.env)
 *   chains.find((c) => c.key === 'base')?.rpcUrls
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getAddress, isAddress, type Address } from 'viem';
import { z } from 'zod';

const addressString = z
  .string()
  .refine((value) => isAddress(value, { strict: false }), 'not an address')
  .transform((value) => getAddress(value));

// Strict: a misspelt key in a file operators edit (`rpc_url`, `multicall`) stops the server
// instead of being ignored.
const chainEntrySchema = z.strictObject({
  id: z.number().int().positive(),
  name: z.string().min(1),
  aliases: z.array(z.string().min(1)).default([]),
  native_symbol: z.string().min(1),
  block_time_ms: z.number().int().nonnegative(),
  eip1559: z.boolean().default(true),
  rpc_urls: z.array(z.url()).min(1),
  multicall3: addressString.optional(),
  ens: z.strictObject({ universal_resolver: addressString }).optional(),
  tokens: z.record(z.string().min(1), addressString).default({}),
});

export const chainsFileSchema = z.object({ chains: z.record(z.string().regex(/^[a-z0-9-]+$/), chainEntrySchema) });

export interface ChainConfig {
  /** The key in chains.json, e.g. `ethereum`; env overrides use it upper-cased. */
  key: string;
  id: number;
  name: string;
  aliases: string[];
  nativeSymbol: string;
  blockTimeMs: number;
  eip1559: boolean;
  rpcUrls: string[];
  multicall3?: Address;
  ens?: { universalResolver: Address };
  /** Known token symbols (upper-case) → address. */
  tokens: Record<string, Address>;
}

/**
 * Where the chain list lives: `CHAINS_CONFIG` (relative to cwd), else `config/chains.json` in
 * the cwd, else the one shipped next to this module's repository root.
 */
export function chainsConfigPath(env: Record<string, string | undefined>, cwd = process.cwd()): string {
  if (env.CHAINS_CONFIG) return isAbsolute(env.CHAINS_CONFIG) ? env.CHAINS_CONFIG : resolve(cwd, env.CHAINS_CONFIG);
  const inCwd = resolve(cwd, 'config/chains.json');
  try {
    readFileSync(inCwd);
    return inCwd;
  } catch {
    // Running from elsewhere (e.g. an agent spawning dist/…/main.js): use the repository's copy.
    const here = dirname(fileURLToPath(import.meta.url));
    const up = here.split(sep).includes('dist') ? '../../config/chains.json' : '../config/chains.json';
    return resolve(here, up);
  }
}

/** Read and validate the chain list at `path` and apply env overrides. */
export function readChainList(env: Record<string, string | undefined>, path = chainsConfigPath(env)): ChainConfig[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read chain list ${path}: ${(err as Error).message}`);
  }
  return parseChainList(raw, env);
}

/** Validate an already-parsed chain list and apply env overrides. */
export function parseChainList(raw: unknown, env: Record<string, string | undefined>): ChainConfig[] {
  const parsed = chainsFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`invalid chain list at ${issue.path.join('.')}: ${issue.message}`);
  }
  return Object.entries(parsed.data.chains).map(([key, entry]) => applyEnv(key, entry, env));
}

function applyEnv(key: string, entry: z.output<typeof chainEntrySchema>, env: Record<string, string | undefined>): ChainConfig {
  const suffix = key.toUpperCase().replace(/-/g, '_');
  const where = (name: string) => `${name}_${suffix}`;
  const rpcUrls = splitList(env[where('RPC_URL')]) ?? entry.rpc_urls;
  for (const url of rpcUrls) {
    if (!z.url().safeParse(url).success) throw new Error(`${where('RPC_URL')} holds something that is not a URL`);
  }
  const multicall3 = optionalAddress(env[where('MULTICALL3')], where('MULTICALL3')) ?? entry.multicall3;
  const universalResolver =
    optionalAddress(env[where('ENS_UNIVERSAL_RESOLVER')], where('ENS_UNIVERSAL_RESOLVER')) ?? entry.ens?.universal_resolver;
  const ens = universalResolver ? { universalResolver } : undefined;
  const tokens: Record<string, Address> = {};
  for (const [symbol, address] of Object.entries(entry.tokens)) tokens[symbol.toUpperCase()] = address;
  for (const pair of splitList(env[where('TOKENS')]) ?? []) {
    const [symbol, address] = pair.split('=').map((s) => s.trim());
    const parsedAddress = optionalAddress(address, where('TOKENS'));
    if (!symbol || !parsedAddress) throw new Error(`${where('TOKENS')} must be SYMBOL=0xaddress pairs, comma-separated`);
    tokens[symbol.toUpperCase()] = parsedAddress;
  }
  return {
    key,
    id: entry.id,
    name: entry.name,
    aliases: entry.aliases,
    nativeSymbol: entry.native_symbol,
    blockTimeMs: entry.block_time_ms,
    eip1559: entry.eip1559,
    rpcUrls,
    multicall3,
    ens,
    tokens,
  };
}

function splitList(value: string | undefined): string[] | undefined {
  const items = value
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return items && items.length > 0 ? items : undefined;
}

function optionalAddress(value: string | undefined, name: string): Address | undefined {
  if (!value) return undefined;
  if (!isAddress(value, { strict: false })) throw new Error(`${name} is not an address`);
  return getAddress(value);
}
