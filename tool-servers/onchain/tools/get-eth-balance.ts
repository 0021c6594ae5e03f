import { formatEther } from 'viem';
import { z } from 'zod';
import { defineTool } from '../../kit/index.js';
import { addressOrNameArgument, chainArgument, hexAddress } from '../arguments.js';
import { addressOrEnsName } from '../ens.js';
import type { OnchainContext } from '../onchain-context.js';

export const getEthBalanceInput = z.object({ address: addressOrNameArgument, chain: chainArgument });

export const getEthBalanceOutput = z
  .object({
    address: hexAddress,
    balance_wei: z.string().regex(/^\d+$/).describe('Exact balance in wei, as a decimal string.'),
    balance_eth: z.string().describe('Exact balance in the native coin (formatEther), never a float.'),
    chain: z.string(),
  })
  .strict();

/** `get_eth_balance`: the native-coin balance of an address or ENS name. */
export function getEthBalanceTool(context: OnchainContext) {
  return defineTool({
    name: 'get_eth_balance',
    description:
      'Native coin balance (ETH, POL, BNB, AVAX…) of an address or ENS name on an EVM chain, exact in wei and in whole coins. ' +
      'An ENS name is resolved on the chain’s own ENS, or on Ethereum mainnet when the chain has none; `address` is the resolved one.',
    input: getEthBalanceInput,
    output: getEthBalanceOutput,
    async run(args) {
      const chain = context.chains.resolve(args.chain);
      const { address } = await addressOrEnsName(context, chain, args.address, 'address');
      const wei = await context.read(chain, `balance:${address}`, context.movingTtlMs(chain), (client) => client.getBalance({ address }));
      return { address, balance_wei: wei.toString(), balance_eth: formatEther(wei), chain: chain.name };
    },
  });
}
