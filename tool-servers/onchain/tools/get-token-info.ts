import { formatUnits } from 'viem';
import { z } from 'zod';
import { defineTool } from '../../kit/index.js';
import { chainArgument, hexAddress } from '../arguments.js';
import type { OnchainContext } from '../onchain-context.js';
import { readTokenInfo } from '../token-reads.js';
import { tokenAddress, tokenArgument } from './get-token-balance.js';

export const getTokenInfoInput = z.object({ token: tokenArgument, chain: chainArgument });

export const getTokenInfoOutput = z
  .object({
    address: hexAddress,
    name: z.string().nullable(),
    symbol: z.string().nullable(),
    decimals: z.number().int(),
    total_supply_raw: z.string().regex(/^\d+$/),
    total_supply: z.string().describe('Total supply with decimals applied (formatUnits), never a float.'),
    chain: z.string(),
  })
  .strict();

/** `get_token_info`: ERC-20 name, symbol, decimals and total supply in one multicall. */
export function getTokenInfoTool(context: OnchainContext) {
  return defineTool({
    name: 'get_token_info',
    description: 'ERC-20 token metadata: name, symbol, decimals and total supply (raw and with decimals applied).',
    input: getTokenInfoInput,
    output: getTokenInfoOutput,
    async run(args) {
      const chain = context.chains.resolve(args.chain);
      const token = tokenAddress(chain, args.token);
      const info = await readTokenInfo(context, chain, token);
      return {
        address: token,
        name: info.name,
        symbol: info.symbol,
        decimals: info.decimals,
        total_supply_raw: info.totalSupply.toString(),
        total_supply: formatUnits(info.totalSupply, info.decimals),
        chain: chain.name,
      };
    },
  });
}
