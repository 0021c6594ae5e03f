import { TransactionNotFoundError, TransactionReceiptNotFoundError, formatEther, getAddress, size, type Hash } from 'viem';
import { z } from 'zod';
import { defineTool, ToolError } from '../../kit/index.js';
import { chainArgument, hexAddress, parseHash } from '../arguments.js';
import type { OnchainContext } from '../onchain-context.js';

export const getTransactionInput = z.object({
  hash: z.string().min(1).max(80).describe('Transaction hash (0x + 64 hex digits).'),
  chain: chainArgument,
});

const weiString = z.string().regex(/^\d+$/);

export const getTransactionOutput = z
  .object({
    hash: z.string().regex(/^0x[0-9a-f]{64}$/),
    status: z.enum(['success', 'reverted', 'pending']),
    from: hexAddress,
    to: hexAddress.nullable().describe('Null for a contract creation.'),
    value_wei: weiString,
    value_eth: z.string(),
    nonce: z.number().int(),
    block_number: z.number().int().nullable(),
    gas_used: weiString.nullable(),
    effective_gas_price_wei: weiString.nullable(),
    fee_wei: weiString.nullable(),
    fee_eth: z.string().nullable(),
    input_size_bytes: z.number().int(),
    contract_address: hexAddress.nullable().describe('The contract a creation transaction deployed.'),
    chain: z.string(),
  })
  .strict();

export type TransactionSummary = z.output<typeof getTransactionOutput>;

/** `get_transaction`: a transaction with its receipt's outcome and fee. Mined ones are cached for good. */
export function getTransactionTool(context: OnchainContext) {
  return defineTool({
    name: 'get_transaction',
    description:
      'A transaction by hash: from, to, value, nonce, block, status (success, reverted or pending), gas used, fee, input size, created contract.',
    input: getTransactionInput,
    output: getTransactionOutput,
    async run(args) {
      const chain = context.chains.resolve(args.chain);
      const hash = parseHash(args.hash, 'hash');
      const cacheKey = `${chain.id}:tx:${hash}`;
      const cached = context.cache.peek<TransactionSummary>(cacheKey);
      if (cached) return cached;
      // TTL 0: concurrent callers share the request; only a mined result is stored (below).
      const summary = await context.read(chain, `tx-read:${hash}`, 0, async (client): Promise<TransactionSummary> => {
        let tx;
        try {
          tx = await client.getTransaction({ hash });
        } catch (err) {
          if (err instanceof TransactionNotFoundError) throw notFound(hash, chain.name);
          throw err;
        }
        const base = {
          hash: tx.hash.toLowerCase(),
          from: getAddress(tx.from),
          to: tx.to ? getAddress(tx.to) : null,
          value_wei: tx.value.toString(),
          value_eth: formatEther(tx.value),
          nonce: tx.nonce,
          input_size_bytes: size(tx.input),
          chain: chain.name,
        };
        const pending = {
          ...base,
          status: 'pending' as const,
          block_number: null,
          gas_used: null,
          effective_gas_price_wei: null,
          fee_wei: null,
          fee_eth: null,
          contract_address: null,
        };
        if (tx.blockNumber === null) return pending;
        let receipt;
        try {
          receipt = await client.getTransactionReceipt({ hash: hash as Hash });
        } catch (err) {
          if (err instanceof TransactionReceiptNotFoundError) return pending; // mined a moment ago, receipt not indexed yet
          throw err;
        }
        const fee = receipt.gasUsed * receipt.effectiveGasPrice;
        return {
          ...base,
          status: receipt.status,
          block_number: Number(receipt.blockNumber),
          gas_used: receipt.gasUsed.toString(),
          effective_gas_price_wei: receipt.effectiveGasPrice.toString(),
          fee_wei: fee.toString(),
          fee_eth: formatEther(fee),
          contract_address: receipt.contractAddress ? getAddress(receipt.contractAddress) : null,
        };
      });
      if (summary.status !== 'pending') context.cache.set(cacheKey, summary, context.immutableTtlMs);
      return summary;
    },
  });
}

function notFound(hash: string, chainName: string): ToolError {
  return new ToolError('not_found', `Transaction ${hash} was not found on ${chainName}.`, { param: 'hash' });
}
