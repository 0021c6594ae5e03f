/**
 * Wallet-native top-ups: `GET /credits/deposit-info` (where to send which token, at what rate,
 * after how many confirmations; the wallet header alone) and `GET /credits/deposits` (the calling
 * wallet's deposits, newest first, a page at a time). The watchers (gateway/deposits/) do the work;
 * these routes only read what they recorded and how far they got.
 *
 * @example
 *   registerDepositRoutes(router, { walletOnly, gated, chains: deposits?.chains ?? [], store })
 */
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { formatUnits } from 'viem';
import { z } from 'zod';
import { invalidRequestFrom } from '../../errors.js';
import type { DepositRecord, DepositStore } from '../../deposits/deposit-store.js';
import { depositId } from '../../deposits/deposit-store.js';
import type { ChainWatch } from '../../deposits/deposit-watchers.js';
import { callerWallet } from '../middleware/wallet.js';
import { json, type RouteDoc } from '../openapi/route-doc.js';

export interface DepositRouteDeps {
  /** Wallet header alone (deposit-info) and the usual gate (the wallet's deposits). */
  walletOnly: Middleware;
  gated: Middleware;
  /** The watched chains (empty: deposits are off). */
  chains: ChainWatch[];
  store: Pick<DepositStore, 'forWallet'>;
}

const MAX_PAGE = 100;

const depositTokenSchema = z.object({
  symbol: z.string(),
  address: z.string().meta({ description: 'The token contract, lower case' }),
  decimals: z.number().int(),
  units_per_credit: z.string().meta({ description: 'Atomic token units per credit (a decimal integer string)', examples: ['1000'] }),
  price_per_credit: z.string().meta({ description: 'Tokens per credit, in whole tokens', examples: ['0.001'] }),
});

const depositInfoSchema = z.object({
  enabled: z.boolean().meta({ description: 'false: no treasury is configured, deposits are not watched' }),
  chains: z.array(
    z.object({
      chain: z.string().meta({ examples: ['base'] }),
      chain_id: z.number().int(),
      name: z.string(),
      treasury: z.string().meta({ description: 'Send accepted tokens here, from the wallet that will use the credits' }),
      confirmations: z
        .union([z.enum(['finalized', 'safe']), z.number().int().positive()])
        .meta({ description: 'Credited once the block is finalized / safe, or has this many confirmations' }),
      tokens: z.array(depositTokenSchema),
    }),
  ),
});

export const depositPageQuerySchema = z
  .object({
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_PAGE)
      .default(20)
      .meta({ description: `Deposits per page (1–${MAX_PAGE})` }),
    cursor: z
      .string()
      .regex(/^[1-9][0-9]{0,15}$/, 'a next_cursor from an earlier page')
      .optional()
      .meta({ description: 'The previous page’s next_cursor' }),
  })
  .strict();

const depositSchema = z.object({
  id: z.string().meta({ description: '<chain id>:<tx hash>:<log index>' }),
  chain: z.string().nullable().meta({ description: 'The chain key; null for a chain no longer watched' }),
  chain_id: z.number().int(),
  token: z.string(),
  symbol: z.string().nullable(),
  amount: z.string().meta({ description: 'Atomic units (a decimal integer string)' }),
  amount_formatted: z.string().nullable().meta({ description: 'In whole tokens' }),
  credits: z.number().int().nullable().meta({ description: 'Credits added; null until credited' }),
  tx_hash: z.string(),
  log_index: z.number().int(),
  block_number: z.number().int(),
  status: z.enum(['pending', 'credited', 'reorged']),
  confirmations: z.number().int().nonnegative().meta({ description: 'Confirmations so far (0 once reorged)' }),
  seen_at: z.number().int().meta({ description: 'Unix seconds' }),
  credited_at: z.number().int().nullable(),
});

const depositListSchema = z.object({
  object: z.literal('list'),
  data: z.array(depositSchema),
  has_more: z.boolean(),
  next_cursor: z.string().nullable(),
});

export function registerDepositRoutes(router: Router, deps: DepositRouteDeps): void {
  const info: z.infer<typeof depositInfoSchema> = {
    enabled: deps.chains.length > 0,
    chains: deps.chains.map(({ chain }) => ({
      chain: chain.key,
      chain_id: chain.chainId,
      name: chain.name,
      treasury: chain.treasury,
      confirmations: chain.confirmations,
      tokens: chain.tokens.map((token) => ({
        symbol: token.symbol,
        address: token.address,
        decimals: token.decimals,
        units_per_credit: token.unitsPerCredit.toString(),
        price_per_credit: formatUnits(token.unitsPerCredit, token.decimals),
      })),
    })),
  };
  router.get('/credits/deposit-info', deps.walletOnly, (ctx) => {
    ctx.body = info;
  });

  router.get('/credits/deposits', deps.gated, async (ctx) => {
    const parsed = depositPageQuerySchema.safeParse(ctx.query);
    if (!parsed.success) throw invalidRequestFrom(parsed.error);
    const { limit, cursor } = parsed.data;
    const rows = await deps.store.forWallet(callerWallet(ctx), { limit: limit + 1, beforeSeq: cursor ? Number(cursor) : undefined });
    const page = rows.slice(0, limit);
    const body: z.infer<typeof depositListSchema> = {
      object: 'list',
      data: page.map((row) => describe(row, deps.chains)),
      has_more: rows.length > limit,
      next_cursor: rows.length > limit ? String(page[page.length - 1].seq) : null,
    };
    ctx.body = body;
  });
}

function describe(row: DepositRecord, chains: ChainWatch[]): z.infer<typeof depositSchema> {
  const watch = chains.find(({ chain }) => chain.chainId === row.chainId);
  const token = watch?.chain.tokens.find((t) => t.address === row.token);
  const head = watch?.status.head;
  const confirmations = row.status === 'reorged' || head === undefined ? 0 : Math.max(0, head - row.blockNumber + 1);
  return {
    id: depositId(row),
    chain: watch?.chain.key ?? null,
    chain_id: row.chainId,
    token: row.token,
    symbol: token?.symbol ?? null,
    amount: row.amount.toString(),
    amount_formatted: token ? formatUnits(row.amount, token.decimals) : null,
    credits: row.credits,
    tx_hash: row.txHash,
    log_index: row.logIndex,
    block_number: row.blockNumber,
    status: row.status,
    confirmations,
    seen_at: Math.floor(row.seenAt / 1000),
    credited_at: row.creditedAt === null ? null : Math.floor(row.creditedAt / 1000),
  };
}

export const depositRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/credits/deposit-info',
    tag: 'Credits',
    summary: 'Where and how to top up with a stablecoin deposit',
    description:
      'Chains, treasury addresses, accepted tokens with their rates, and the confirmation rule. Send from the wallet that will ' +
      'use the credits: the sender of the transfer is the wallet credited (a withdrawal from an exchange credits the exchange).',
    access: 'wallet',
    response: { description: 'Deposit terms', content: json(depositInfoSchema) },
  },
  {
    method: 'get',
    path: '/credits/deposits',
    tag: 'Credits',
    summary: "The calling wallet's deposits, newest first",
    access: 'gated',
    query: depositPageQuerySchema,
    response: { description: 'One page of deposits', content: json(depositListSchema) },
    errors: [400],
  },
];
