import { getAddress, size, type Hex } from 'viem';
import { z } from 'zod';
import { defineTool } from '../../kit/index.js';
import { addressArgument, chainArgument, hexAddress, parseAddress } from '../arguments.js';
import type { OnchainContext } from '../onchain-context.js';

export const isContractInput = z.object({ address: addressArgument, chain: chainArgument });

export const isContractOutput = z
  .object({
    address: hexAddress,
    is_contract: z.boolean(),
    kind: z.enum(['eoa', 'contract', 'delegated_eoa']).describe('delegated_eoa: an EIP-7702 account whose code delegates to another.'),
    delegate: hexAddress.nullable().describe('For delegated_eoa: the contract the account delegates to.'),
    bytecode_size: z.number().int(),
    chain: z.string(),
  })
  .strict();

/** EIP-7702 delegation designator: 0xef0100 followed by the 20-byte delegate address. */
const DELEGATION_PREFIX = '0xef0100';

/**
 * Classify an account's code.
 *
 * @example
 *   classifyCode('0xef0100' + '11'.repeat(20)) // { kind: 'delegated_eoa', delegate: '0x1111…' }
 */
export function classifyCode(code: Hex | undefined): { kind: 'eoa' | 'contract' | 'delegated_eoa'; delegate: string | null; size: number } {
  if (!code || code === '0x') return { kind: 'eoa', delegate: null, size: 0 };
  const lower = code.toLowerCase();
  if (lower.startsWith(DELEGATION_PREFIX) && lower.length === DELEGATION_PREFIX.length + 40) {
    return { kind: 'delegated_eoa', delegate: getAddress(`0x${lower.slice(DELEGATION_PREFIX.length)}`), size: size(code) };
  }
  return { kind: 'contract', delegate: null, size: size(code) };
}

/** `is_contract`: whether an address holds contract code (EIP-7702 delegated accounts are not contracts). */
export function isContractTool(context: OnchainContext) {
  return defineTool({
    name: 'is_contract',
    description:
      'Whether an address is a contract or an externally owned account; EIP-7702 delegated accounts are reported as delegated_eoa.',
    input: isContractInput,
    output: isContractOutput,
    async run(args) {
      const chain = context.chains.resolve(args.chain);
      const address = parseAddress(args.address, 'address');
      const code = await context.read(chain, `code:${address}`, context.movingTtlMs(chain), (client) => client.getCode({ address }));
      const { kind, delegate, size: bytecodeSize } = classifyCode(code);
      return { address, is_contract: kind === 'contract', kind, delegate, bytecode_size: bytecodeSize, chain: chain.name };
    },
  });
}
