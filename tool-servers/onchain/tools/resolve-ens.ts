import { z } from 'zod';
import { defineTool, ToolError } from '../../kit/index.js';
import { chainArgument, hexAddress, parseAddress } from '../arguments.js';
import { ensChainFor, normalizeEnsName, resolveEnsAddress, resolveEnsName } from '../ens.js';
import type { OnchainContext } from '../onchain-context.js';

export const resolveEnsInput = z.object({
  name: z.string().min(1).max(255).optional().describe('ENS name to resolve to an address (forward), e.g. "vitalik.eth".'),
  address: z.string().min(1).max(64).optional().describe('Address whose primary ENS name to find (reverse).'),
  chain: chainArgument.describe('Chain whose ENS deployment to use (default "ethereum").'),
});

export const resolveEnsOutput = z
  .object({
    direction: z.enum(['forward', 'reverse']),
    name: z.string().nullable().describe('The normalized name; null when the address has no verified primary name.'),
    address: hexAddress.nullable().describe('The resolved address; null when the name has no address.'),
    chain: z.string(),
  })
  .strict();

/** `resolve_ens`: name → address, or address → primary name (verified by forward resolution). */
export function resolveEnsTool(context: OnchainContext) {
  return defineTool({
    name: 'resolve_ens',
    description:
      'Resolve an ENS name to an address (forward), or an address to its primary ENS name (reverse, only when that name resolves back to the same address). Pass exactly one of name or address.',
    input: resolveEnsInput,
    output: resolveEnsOutput,
    async run(args) {
      if ((args.name === undefined) === (args.address === undefined)) {
        throw new ToolError('invalid_arguments', 'Pass exactly one of "name" (forward) or "address" (reverse).', {
          param: args.name === undefined ? 'name' : 'address',
        });
      }
      const chain = ensChainFor(context, context.chains.resolve(args.chain));
      if (args.name !== undefined) {
        const name = normalizeEnsName(args.name, 'name');
        const address = await resolveEnsAddress(context, chain, name);
        return { direction: 'forward' as const, name, address, chain: chain.name };
      }
      const address = parseAddress(args.address!, 'address');
      const name = await resolveEnsName(context, chain, address);
      return { direction: 'reverse' as const, name, address, chain: chain.name };
    },
  });
}
