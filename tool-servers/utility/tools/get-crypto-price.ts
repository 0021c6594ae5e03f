import { z } from 'zod';
import { defineTool, ToolError } from '../../kit/index.js';
import { findAssetById, findPriceChain, PRICE_CHAIN_NAMES, resolveSymbol } from '../asset-map.js';
import type { PriceLookup } from '../prices/price-lookup.js';
import type { PriceTarget } from '../prices/types.js';

export const getCryptoPriceInput = z.object({
  symbol: z
    .string()
    .trim()
    .min(1)
    .max(20)
    .optional()
    .describe('Ticker such as "BTC", "ETH", "USDC". An ambiguous ticker means the largest asset by market cap.'),
  id: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z0-9][a-z0-9-]{0,99}$/, 'must be a CoinGecko id such as "bitcoin"')
    .optional()
    .describe('CoinGecko asset id such as "bitcoin" or "usd-coin"; exact, no guessing.'),
  contract: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, 'must be 0x followed by 40 hex digits')
    .optional()
    .describe('Token contract address; needs `chain`.'),
  chain: z
    .string()
    .trim()
    .min(1)
    .max(40)
    .optional()
    .describe(`Chain of \`contract\`: ${PRICE_CHAIN_NAMES.join(', ')}.`),
  currency: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z]{3,5}$/, 'must be a currency code such as "usd" or "eur"')
    .default('usd')
    .describe('Quote currency (default usd). Only CoinGecko prices in other currencies.'),
});

export const getCryptoPriceOutput = z.object({
  symbol: z.string(),
  name: z.string().optional(),
  /** Which asset was priced: a CoinGecko id for listed assets. */
  asset_id: z.string().optional(),
  resolved_from: z.enum(['symbol', 'id', 'contract']),
  contract: z.string().optional(),
  chain: z.string().optional(),
  price: z.number(),
  currency: z.string(),
  change_24h_pct: z.number().optional(),
  market_cap: z.number().optional(),
  provider: z.string(),
  as_of: z.string(),
  note: z.string().optional(),
});

type Input = z.output<typeof getCryptoPriceInput>;

/** What the tool resolved the arguments to, before any provider is asked. */
interface Resolved {
  target: PriceTarget;
  from: 'symbol' | 'id' | 'contract';
  symbol?: string;
  name?: string;
  assetId?: string;
  note?: string;
}

/**
 * `get_crypto_price`: resolve symbol / id / contract to one asset, then ask the price providers
 * in order (cached, coalesced) and say which asset and which provider answered.
 *
 * @example
 *   createServer({ name, version, tools: [getCryptoPriceTool({ prices })] })
 */
export function getCryptoPriceTool(deps: { prices: PriceLookup }) {
  return defineTool({
    name: 'get_crypto_price',
    description:
      'Live price of a crypto asset by ticker (symbol), CoinGecko id, or token contract + chain, with 24 h change and market cap when the provider has them. Says which asset and provider answered.',
    input: getCryptoPriceInput,
    output: getCryptoPriceOutput,
    async run(args, { signal }) {
      const resolved = resolveArguments(args);
      const { provider, quote } = await deps.prices.quote(resolved.target, args.currency, signal);
      const notes = [resolved.note, quote.note].filter((n): n is string => Boolean(n));
      // Absent, not undefined: in-process clients see the object as is, without a JSON round trip.
      return withoutUndefined({
        symbol: resolved.symbol ?? quote.symbol?.toUpperCase() ?? (args.contract ? args.contract.toLowerCase() : (args.id ?? '')),
        name: resolved.name ?? quote.name,
        asset_id: resolved.assetId ?? quote.assetId,
        resolved_from: resolved.from,
        ...(resolved.target.kind === 'contract' ? { contract: resolved.target.address, chain: resolved.target.chain.name } : {}),
        price: quote.price,
        currency: args.currency,
        change_24h_pct: quote.change24hPct,
        market_cap: quote.marketCap,
        provider,
        as_of: new Date(quote.asOfMs).toISOString(),
        ...(notes.length > 0 ? { note: notes.join(' ') } : {}),
      });
    },
  });
}

function withoutUndefined<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function resolveArguments(args: Input): Resolved {
  const given = (['symbol', 'id', 'contract'] as const).filter((key) => args[key] !== undefined);
  if (given.length !== 1) {
    const message =
      given.length === 0
        ? 'Pass one of `symbol` (e.g. "BTC"), `id` (a CoinGecko id such as "bitcoin") or `contract` with `chain`.'
        : `Pass only one of \`symbol\`, \`id\` or \`contract\` (got ${given.map((k) => `\`${k}\``).join(' and ')}).`;
    throw new ToolError('invalid_arguments', message, { param: given[1] ?? 'symbol' });
  }
  if (args.chain !== undefined && args.contract === undefined) {
    throw new ToolError('invalid_arguments', '`chain` goes with `contract`; for a coin, pass `symbol` or `id` alone.', { param: 'chain' });
  }

  if (args.contract !== undefined) {
    if (args.chain === undefined) {
      throw new ToolError('invalid_arguments', `\`contract\` needs \`chain\` (one of ${PRICE_CHAIN_NAMES.join(', ')}).`, {
        param: 'chain',
      });
    }
    const chain = findPriceChain(args.chain);
    if (!chain) {
      throw new ToolError('invalid_arguments', `Unknown chain "${args.chain}"; use one of ${PRICE_CHAIN_NAMES.join(', ')}.`, {
        param: 'chain',
      });
    }
    return { target: { kind: 'contract', chain, address: args.contract.toLowerCase() }, from: 'contract' };
  }

  if (args.id !== undefined) {
    const known = findAssetById(args.id);
    return {
      target: {
        kind: 'asset',
        id: args.id,
        symbol: known?.symbol,
        name: known?.name,
        coincapId: known?.coincapId ?? args.id,
        binanceBase: known?.binanceBase,
      },
      from: 'id',
      symbol: known?.symbol,
      name: known?.name,
      assetId: args.id,
    };
  }

  const symbol = (args.symbol as string).toUpperCase();
  const match = resolveSymbol(symbol);
  if (!match) return { target: { kind: 'symbol', symbol }, from: 'symbol', symbol };
  const { asset, alsoKnownAs } = match;
  const note =
    alsoKnownAs.length > 0
      ? `"${symbol}" is also the ticker of ${alsoKnownAs.map((a) => `${a.name} (id "${a.id}")`).join(', ')}; chose ${asset.name} (id "${asset.id}"), the largest by market cap. Pass \`id\` to choose another.`
      : undefined;
  return {
    target: {
      kind: 'asset',
      id: asset.id,
      symbol: asset.symbol,
      name: asset.name,
      coincapId: asset.coincapId ?? asset.id,
      binanceBase: asset.binanceBase,
    },
    from: 'symbol',
    symbol: asset.symbol,
    name: asset.name,
    assetId: asset.id,
    note,
  };
}
