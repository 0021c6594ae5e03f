/**
 * The chain reads x402 settlement needs, and nothing else: the gateway reads, it never sends a
 * transaction. A settlement whose outcome was unknown is decided from EIP-3009's own records:
 * `authorizationState(authorizer, nonce)` (true once the nonce is spent) and the
 * `AuthorizationUsed(authorizer, nonce)` event, which must be followed at once (the next log of the
 * same token, as `transferWithAuthorization` emits them) by the `Transfer` of the payment itself
 * (payer → pay-to, the amount): a nonce can also be spent by another authorization of the same
 * payer, or cancelled (`AuthorizationCanceled`), and that must never count as payment, nor may one
 * transfer count for two nonces. "Expired" is judged by the chain's clock, not ours: the nonce is
 * read at a block whose timestamp is past the authorization's `validBefore`.
 *
 * @example
 *   const from = await latestBlock(rpcUrl)                      // when the payment is claimed
 *   const state = await settlementState({ rpcUrl, asset, payer, payTo, amount, nonce, fromBlock: from })
 */
import { createPublicClient, http, parseAbi, parseEventLogs, type Address, type Hex, type PublicClient } from 'viem';
import { PageRange } from '../deposits/page-range.js';

const EIP3009_ABI = parseAbi([
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);

/** Blocks one eth_getLogs asks for at most; less while the provider refuses that many (PageRange). */
const MAX_LOG_RANGE = 1_000;

/** One client per RPC URL, made on first use, with the log range that provider was last seen to take. */
const clients = new Map<string, { client: PublicClient; range: PageRange }>();

function readerFor(rpcUrl: string): { client: PublicClient; range: PageRange } {
  let reader = clients.get(rpcUrl);
  if (!reader) {
    reader = {
      client: createPublicClient({ transport: http(rpcUrl, { timeout: 10_000, retryCount: 1 }) }),
      range: new PageRange(MAX_LOG_RANGE),
    };
    clients.set(rpcUrl, reader);
  }
  return reader;
}

function clientFor(rpcUrl: string): PublicClient {
  return readerFor(rpcUrl).client;
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
  /** The authorization's validBefore (unix seconds). */
  validBefore: number;
  /** The chain's latest block when the payment was claimed: its settlement is at or after it. */
  fromBlock: bigint;
  /**
   * No log page is asked for after this time (Date.now() ms): the answer is then `unconfirmed`.
   * A client waiting on the search sets one; the reconciler searches the whole range.
   */
  searchUntil?: number;
}

/**
 * `paid`: the nonce was spent by this payment's transfer; `unused`: not spent (yet); `expired`: not
 * spent at a block past validBefore, so it never can be; `spent_otherwise`: spent by something
 * that did not pay us; `unconfirmed`: spent, but its event is not visible yet.
 */
export type SettlementState = 'paid' | 'unused' | 'expired' | 'spent_otherwise' | 'unconfirmed';

export async function settlementState(query: SettlementQuery): Promise<SettlementState> {
  const client = clientFor(query.rpcUrl);
  const asset = query.asset as Address;
  const head = await client.getBlock({ blockTag: 'latest' });
  const used = await client.readContract({
    address: asset,
    abi: EIP3009_ABI,
    functionName: 'authorizationState',
    args: [query.payer as Address, query.nonce as Hex],
    blockNumber: head.number,
  });
  if (!used) return head.timestamp > BigInt(query.validBefore) ? 'expired' : 'unused';
  const search = { rpcUrl: query.rpcUrl, asset, authorizer: query.payer as Address, nonce: query.nonce as Hex, until: query.searchUntil };
  const event = await firstEvent(search, 'AuthorizationUsed', query.fromBlock, head.number);
  if (event === OUT_OF_TIME) return 'unconfirmed';
  if (!event) {
    const canceled = await firstEvent(search, 'AuthorizationCanceled', query.fromBlock, head.number);
    return canceled && canceled !== OUT_OF_TIME ? 'spent_otherwise' : 'unconfirmed';
  }
  const receipt = await client.getTransactionReceipt({ hash: event.transactionHash });
  const next = receipt.logs.find((log) => log.logIndex === event.logIndex + 1);
  const [transfer] = next ? parseEventLogs({ abi: EIP3009_ABI, eventName: 'Transfer', logs: [next] }) : [];
  const paid =
    transfer !== undefined &&
    transfer.address.toLowerCase() === query.asset.toLowerCase() &&
    transfer.args.from.toLowerCase() === query.payer.toLowerCase() &&
    transfer.args.to.toLowerCase() === query.payTo.toLowerCase() &&
    transfer.args.value === query.amount;
  return paid ? 'paid' : 'spent_otherwise';
}

const OUT_OF_TIME = Symbol('out of time');

/**
 * The first `eventName` log of this authorizer's nonce in [from, to], read page by page: the
 * settlement may be checked long after the claim, and providers cap the blocks (or results) one
 * eth_getLogs may span; a refused page is asked again, smaller. OUT_OF_TIME once `until` passed
 * before the range was read.
 */
async function firstEvent(
  search: { rpcUrl: string; asset: Address; authorizer: Address; nonce: Hex; until?: number },
  eventName: 'AuthorizationUsed' | 'AuthorizationCanceled',
  from: bigint,
  to: bigint,
) {
  const { client, range } = readerFor(search.rpcUrl);
  const args = { authorizer: search.authorizer, nonce: search.nonce };
  const last = Number(to);
  for (let start = Number(from); start <= last;) {
    if (search.until !== undefined && Date.now() > search.until) return OUT_OF_TIME;
    const { end, result: events } = await range.page(start, last, (fromBlock, toBlock) =>
      client.getContractEvents({
        address: search.asset,
        abi: EIP3009_ABI,
        eventName,
        args,
        fromBlock: BigInt(fromBlock),
        toBlock: BigInt(toBlock),
      }),
    );
    if (events.length > 0) return events[0];
    start = end + 1;
  }
  return undefined;
}
