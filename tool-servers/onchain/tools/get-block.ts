import { BlockNotFoundError, getAddress, type Block, type Hash } from 'viem';
import { z } from 'zod';
import { defineTool, ToolError } from '../../kit/index.js';
import { chainArgument, hexAddress } from '../arguments.js';
import type { ChainConfig } from '../chains.js';
import type { OnchainContext } from '../onchain-context.js';

export const blockTags = ['latest', 'finalized', 'safe', 'earliest', 'pending'] as const;

export const getBlockInput = z.object({
  block: z
    .union([z.string().min(1).max(80), z.number().int().nonnegative()])
    .optional()
    .describe('Block number, 0x block hash, or tag: "latest" (default), "finalized", "safe", "earliest", "pending".'),
  chain: chainArgument,
});

export const getBlockOutput = z
  .object({
    number: z.number().int(),
    hash: z.string().regex(/^0x[0-9a-f]{64}$/),
    parent_hash: z.string().regex(/^0x[0-9a-f]{64}$/),
    timestamp: z.number().int().describe('Unix seconds.'),
    timestamp_iso: z.string(),
    transaction_count: z.number().int(),
    gas_used: z.string().regex(/^\d+$/),
    gas_limit: z.string().regex(/^\d+$/),
    base_fee_wei: z.string().regex(/^\d+$/).nullable(),
    miner: hexAddress,
    chain: z.string(),
  })
  .strict();

type BlockSelector = { blockHash: Hash } | { blockNumber: bigint } | { blockTag: (typeof blockTags)[number] };

/** Parse the `block` argument into a viem selector. */
export function parseBlockSelector(block: string | number | undefined): BlockSelector {
  if (block === undefined) return { blockTag: 'latest' };
  if (typeof block === 'number') return { blockNumber: BigInt(block) };
  const value = block.trim().toLowerCase();
  if ((blockTags as readonly string[]).includes(value)) return { blockTag: value as (typeof blockTags)[number] };
  if (/^\d+$/.test(value)) return { blockNumber: BigInt(value) };
  if (/^0x[0-9a-f]{64}$/.test(value)) return { blockHash: value as Hash };
  if (/^0x[0-9a-f]{1,16}$/.test(value)) return { blockNumber: BigInt(value) };
  throw new ToolError('invalid_arguments', `block: "${block}" is not a block number, a 0x block hash or a tag (${blockTags.join(', ')}).`, {
    param: 'block',
  });
}

/** `get_block`: a block's header facts by number, hash or tag. */
export function getBlockTool(context: OnchainContext) {
  return defineTool({
    name: 'get_block',
    description: 'A block by number, hash or tag (latest, finalized, safe): number, hash, time, transaction count, gas, base fee, miner.',
    input: getBlockInput,
    output: getBlockOutput,
    async run(args) {
      const chain = context.chains.resolve(args.chain);
      const selector = parseBlockSelector(args.block);
      // A block by hash never changes; by number or tag it can (new head, reorg): one block time.
      const ttl = 'blockHash' in selector ? context.immutableTtlMs : context.movingTtlMs(chain);
      const key = `block:${'blockHash' in selector ? selector.blockHash : 'blockNumber' in selector ? selector.blockNumber : selector.blockTag}`;
      // The described block is what is kept, never viem's Block with its array of transaction hashes.
      const described = await context.read(chain, key, ttl, async (client) => {
        try {
          return describeBlock(await client.getBlock(selector), chain);
        } catch (err) {
          if (err instanceof BlockNotFoundError) throw blockNotFound(chain, args.block);
          throw err;
        }
      });
      context.cache.set(`${chain.id}:block:${described.hash}`, described, context.immutableTtlMs);
      return described;
    },
  });
}

function blockNotFound(chain: ChainConfig, block: string | number | undefined): ToolError {
  return new ToolError('not_found', `Block ${String(block ?? 'latest')} was not found on ${chain.name}.`, { param: 'block' });
}

type BlockSummary = z.output<typeof getBlockOutput>;

function describeBlock(block: Block, chain: ChainConfig): BlockSummary {
  if (block.number === null || block.hash === null) throw blockNotFound(chain, 'pending');
  const timestamp = Number(block.timestamp);
  return {
    number: Number(block.number),
    hash: block.hash,
    parent_hash: block.parentHash,
    timestamp,
    timestamp_iso: new Date(timestamp * 1000).toISOString(),
    transaction_count: block.transactions.length,
    gas_used: block.gasUsed.toString(),
    gas_limit: block.gasLimit.toString(),
    base_fee_wei: block.baseFeePerGas?.toString() ?? null,
    miner: getAddress(block.miner),
    chain: chain.name,
  };
}
