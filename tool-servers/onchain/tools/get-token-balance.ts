import { formatUnits, type Address } from 'viem';
import { z } from 'zod';
import { defineTool, ToolError } from '../../kit/index.js';
import { addressOrNameArgument, chainArgument, hexAddress, parseAddress } from '../arguments.js';
import type { ChainConfig } from '../chains.js';
import { addressOrEnsName } from '../ens.js';
import type { OnchainContext } from '../onchain-context.js';
import { readTokenBalance, readTokenMetadata } from '../token-reads.js';

export const tokenArgument = z
  .string()
  .min(1)
  .max(64)
  .describe('Token contract address, or a known symbol on that chain (USDC, USDT, WETH, DAI…).');

export const getTokenBalanceInput = z.object({ address: addressOrNameArgument, token: tokenArgument, chain: chainArgument });

export const getTokenBalanceOutput = z
  .object({
    address: hexAddress,
    token: z.object({ address: hexAddress, symbol: z.string().nullable(), decimals: z.number().int() }).strict(),
    balance_raw: z.string().regex(/^\d+$/).describe('Balance in the token’s smallest unit, as a decimal string.'),
    balance: z.string().describe('Balance with decimals applied (formatUnits), never a float.'),
    chain: z.string(),
    resolved_from: z
      .object({ name: z.string(), chain: z.string() })
      .strict()
      .optional()
      .describe('Present when `address` was an ENS name: the name and the chain whose ENS resolved it.'),
  })
  .strict();

/**
 * A token argument: a 0x address, or a symbol the chain's config knows.
 *
 * @example
 *   tokenAddress(chains.resolve('base'), 'usdc') // '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'
 */
export function tokenAddress(chain: ChainConfig, token: string): Address {
  if (/^0x/i.test(token.trim())) return parseAddress(token, 'token');
  const known = chain.tokens[token.trim().toUpperCase()];
  if (known) return known;
  const symbols = Object.keys(chain.tokens);
  throw new ToolError(
    'invalid_arguments',
    `token: "${token}" is not a known token symbol on ${chain.name}${symbols.length ? ` (known: ${symbols.join(', ')})` : ''}; pass the contract address.`,
    { param: 'token' },
  );
}

/** `get_token_balance`: an ERC-20 balance with the token's decimals applied. */
export function getTokenBalanceTool(context: OnchainContext) {
  return defineTool({
    name: 'get_token_balance',
    description:
      'ERC-20 token balance of an address or ENS name, raw and with decimals applied. The token is a contract address or a known symbol. ' +
      'An ENS name is resolved on the chain’s own ENS, or on Ethereum mainnet when the chain has none (see resolved_from).',
    input: getTokenBalanceInput,
    output: getTokenBalanceOutput,
    async run(args) {
      const chain = context.chains.resolve(args.chain);
      const token = tokenAddress(chain, args.token);
      const { address, resolvedFrom } = await addressOrEnsName(context, chain, args.address, 'address');
      const [meta, raw] = await Promise.all([readTokenMetadata(context, chain, token), readTokenBalance(context, chain, token, address)]);
      return {
        address,
        token: { address: token, symbol: meta.symbol, decimals: meta.decimals },
        balance_raw: raw.toString(),
        balance: formatUnits(raw, meta.decimals),
        chain: chain.name,
        ...(resolvedFrom ? { resolved_from: resolvedFrom } : {}),
      };
    },
  });
}
