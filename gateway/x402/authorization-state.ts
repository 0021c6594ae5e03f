/**
 * The one chain read x402 needs: EIP-3009's `authorizationState(authorizer, nonce)`, true once
 * the authorization was used. A settlement whose outcome was unknown is decided by it: used means
 * the transfer happened (the nonce is spent), unused after `validBefore` means it never can. The
 * gateway only reads; it never sends a transaction.
 *
 * @example
 *   const used = await authorizationUsed({ rpcUrl, asset, authorizer, nonce })
 */
import { createPublicClient, http, type Address, type Hex, type PublicClient } from 'viem';

const EIP3009_AUTHORIZATION_STATE_ABI = [
  {
    type: 'function',
    name: 'authorizationState',
    stateMutability: 'view',
    inputs: [
      { name: 'authorizer', type: 'address' },
      { name: 'nonce', type: 'bytes32' },
    ],
    outputs: [{ name: '', type: 'bool' }],
  },
] as const;

/** One client per RPC URL, made on first use. */
const clients = new Map<string, PublicClient>();

export async function authorizationUsed(read: { rpcUrl: string; asset: string; authorizer: string; nonce: string }): Promise<boolean> {
  let client = clients.get(read.rpcUrl);
  if (!client) {
    client = createPublicClient({ transport: http(read.rpcUrl, { timeout: 10_000, retryCount: 1 }) });
    clients.set(read.rpcUrl, client);
  }
  return client.readContract({
    address: read.asset as Address,
    abi: EIP3009_AUTHORIZATION_STATE_ABI,
    functionName: 'authorizationState',
    args: [read.authorizer as Address, read.nonce as Hex],
  });
}
