import { formatGwei, hexToBigInt, type Hex } from 'viem';
import { z } from 'zod';
import { defineTool } from '../../kit/index.js';
import { chainArgument } from '../arguments.js';
import { isMethodUnsupported } from '../call-failure.js';
import type { OnchainContext } from '../onchain-context.js';

export const getGasPriceInput = z.object({ chain: chainArgument });

const weiString = z.string().regex(/^\d+$/);

export const getGasPriceOutput = z
  .object({
    gas_price_wei: weiString,
    gas_price_gwei: z.string(),
    eip1559: z.boolean().describe('Whether the latest block carries a base fee.'),
    base_fee_wei: weiString.nullable(),
    base_fee_gwei: z.string().nullable(),
    priority_fee_wei: weiString.nullable().describe('Suggested max priority fee (eth_maxPriorityFeePerGas).'),
    priority_fee_gwei: z.string().nullable(),
    block_number: z.number().int(),
    chain: z.string(),
  })
  .strict();

/** `get_gas_price`: legacy gas price, and base fee plus suggested priority fee on EIP-1559 chains. */
export function getGasPriceTool(context: OnchainContext) {
  return defineTool({
    name: 'get_gas_price',
    description: 'Current gas price in wei and gwei; on EIP-1559 chains also the base fee and a suggested priority fee.',
    input: getGasPriceInput,
    output: getGasPriceOutput,
    async run(args) {
      const chain = context.chains.resolve(args.chain);
      return context.read(chain, 'gas', context.movingTtlMs(chain), async (client) => {
        // Three reads, one JSON-RPC batch.
        const [gasPrice, block, priority] = await Promise.all([
          client.getGasPrice(),
          client.getBlock({ blockTag: 'latest' }),
          chain.eip1559
            ? client.request({ method: 'eth_maxPriorityFeePerGas' }).then(
                (hex) => hexToBigInt(hex as Hex),
                (err: unknown) => {
                  if (!isMethodUnsupported(err)) throw err;
                  return null; // a node without the method: derived below
                },
              )
            : Promise.resolve(null),
        ]);
        const baseFee = block.baseFeePerGas ?? null;
        const priorityFee = baseFee === null ? null : (priority ?? (gasPrice > baseFee ? gasPrice - baseFee : 0n));
        return {
          gas_price_wei: gasPrice.toString(),
          gas_price_gwei: formatGwei(gasPrice),
          eip1559: baseFee !== null,
          base_fee_wei: baseFee?.toString() ?? null,
          base_fee_gwei: baseFee === null ? null : formatGwei(baseFee),
          priority_fee_wei: priorityFee?.toString() ?? null,
          priority_fee_gwei: priorityFee === null ? null : formatGwei(priorityFee),
          block_number: Number(block.number),
          chain: chain.name,
        };
      });
    },
  });
}
