/**
 * The chain reads x402 settlement needs, and nothing else: the gateway reads, it never sends a
 * transaction. A settlement whose outcome was unknown is decided from EIP-3009's own records:
 * `authorizationState(authorizer, nonce)` (true once the nonce is spent) and the
 * `AuthorizationUsed(authorizer, nonce)` event, whose transaction must carry the `Transfer` of the
 * payment itself (payer → pay-to, the amount): a nonce can also be spent by another authorization
 * of the same payer, or cancelled, and that must never count as payment.
 *
 * @example
 *   const from = await latestBlock(rpcUrl)                      // when the payment is claimed
 *   const state = await settlementState({ rpcUrl, asset, payer, payTo, amount, nonce, fromBlock: from })
 */
import { createPublicClient, http, parseAbi, parseEventLogs, type Address, type Hex, type PublicClient } from 'viem';

const EIP3009_ABI = parseAbi([
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);

/** One client per RPC URL, made on first use. */
const clients = new Map<string, PublicClient>();

function clientFor(rpcUrl: string): PublicClient {
  let client = clients.get(rpcUrl);
  if (!client) {
    client = createPublicClient({ transport: http(rpcUrl, { timeout: 10_000, retryCount: 1 }) });
    clients.set(rpcUrl, client);
  }
  return client;
}

export async function latestBlock(rpcUrl: string): Promise<bigint> {
  return clientFor(rpcUrl).getBlockNumber();
}

export interface SettlementQuery {
  rpcUrl: string;
  asset: string;
  payer: string;
  payTo: string;
  amount: bigint;
  nonce: string;
  /** A block at or before the payment was claimed (null: unknown, the nonce's state alone decides). */
  fromBlock: bigint | null;
}

/**
 * `paid`: the nonce was spent by this payment's transfer; `unused`: not spent (yet); `spent_otherwise`:
 * spent by something that did not pay us; `unconfirmed`: spent, but its event is not visible yet.
 */
export type SettlementState = 'paid' | 'unused' | 'spent_otherwise' | 'unconfirmed';

export async function settlementState(query: SettlementQuery): Promise<SettlementState> {
  const client = clientFor(query.rpcUrl);
  const asset = query.asset as Address;
  const used = await client.readContract({
    address: asset,
    abi: EIP3009_ABI,
    functionName: 'authorizationState',
    args: [query.payer as Address, query.nonce as Hex],
  });
  if (!used) return 'unused';
  if (query.fromBlock === null) return 'paid';
  const [event] = await client.getContractEvents({
    address: asset,
    abi: EIP3009_ABI,
    eventName: 'AuthorizationUsed',
    args: { authorizer: query.payer as Address, nonce: query.nonce as Hex },
    fromBlock: query.fromBlock,
    toBlock: 'latest',
  });
  if (!event) return 'unconfirmed';
  const receipt = await client.getTransactionReceipt({ hash: event.transactionHash });
  const transfers = parseEventLogs({ abi: EIP3009_ABI, eventName: 'Transfer', logs: receipt.logs });
  const paid = transfers.some(
    (t) =>
      t.address.toLowerCase() === query.asset.toLowerCase() &&
      t.args.from.toLowerCase() === query.payer.toLowerCase() &&
      t.args.to.toLowerCase() === query.payTo.toLowerCase() &&
      t.args.value === query.amount,
  );
  return paid ? 'paid' : 'spent_otherwise';
}
