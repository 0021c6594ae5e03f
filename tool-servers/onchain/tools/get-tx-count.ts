import { z } from 'zod';
import { defineTool } from '../../kit/index.js';
import { addressOrNameArgument, chainArgument, hexAddress } from '../arguments.js';
import { addressOrEnsName } from '../ens.js';
import type { OnchainContext } from '../onchain-context.js';

export const getTxCountInput = z.object({ address: addressOrNameArgument, chain: chainArgument });

export const getTxCountOutput = z
  .object({
    address: hexAddress,
    nonce_latest: z.number().int().describe('Transactions sent and mined (the `latest` nonce).'),
    nonce_pending: z.number().int().describe('Including transactions still in the mempool (the `pending` nonce).'),
    chain: z.string(),
  })
  .strict();

/** `get_tx_count`: the latest and pending nonce of an address. */
export function getTxCountTool(context: OnchainContext) {
  return defineTool({
    name: 'get_tx_count',
    description:
      'Number of transactions sent by an address or ENS name (its nonce), mined (`latest`) and including pending ones. ' +
      'An ENS name is resolved on the chain’s own ENS, or on Ethereum mainnet when the chain has none.',
    input: getTxCountInput,
    output: getTxCountOutput,
    async run(args) {
      const chain = context.chains.resolve(args.chain);
      const { address } = await addressOrEnsName(context, chain, args.address, 'address');
      const [latest, pending] = await context.read(chain, `nonce:${address}`, context.movingTtlMs(chain), (client) =>
        Promise.all([
          client.getTransactionCount({ address, blockTag: 'latest' }),
          client.getTransactionCount({ address, blockTag: 'pending' }),
        ]),
      );
      return { address, nonce_latest: latest, nonce_pending: pending, chain: chain.name };
    },
  });
}
