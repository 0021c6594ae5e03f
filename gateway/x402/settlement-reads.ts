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
 * The chain is read through a SettlementChain per asset RPC URL, which the composition root builds
 * (`settlementChains`) on x402's policy, X402_READ_POLICY.
 *
 * @example
 *   const chains = settlementChains(config.x402.assets)          // once, in server.ts
 *   const chain = chains.get(rpcUrl)!
 *   const from = await latestBlock(chain)                        // when the payment is claimed
 *   const state = await settlementState({ rpcUrl, asset, payer, payTo, amount, nonce, fromBlock: from }, chain)
 */
import { parseAbi, parseEventLogs, type Address, type Hex } from 'viem';
import { ChainClient, type ReadPolicy } from '../../chains/chain-client.js';
import { PageRange } from '../../chains/page-range.js';
import type { X402Asset } from '../config.js';

const EIP3009_ABI = parseAbi([
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);

/**
 * x402's policy for its chain reads: ten seconds a request and one retry of the asset's one RPC
 * URL (the claim's block read is bounded tighter by payments.ts, BLOCK_READ_TIMEOUT_MS).
 */
export const X402_READ_POLICY: ReadPolicy = { timeoutMs: 10_000, retries: 1 };

/** Blocks one eth_getLogs asks for at most; less while the provider refuses that many (PageRange). */
const MAX_LOG_RANGE = 1_000;

/**
 * One asset RPC as the settlement reads use it: its client, and the log range its provider was
 * last seen to take, kept across searches and shared by searches that run at once.
 */
export interface SettlementChain {
  client: ChainClient;
  logRange: PageRange;
}

/** A SettlementChain on x402's policy, learning its provider's log range from scratch. */
export function settlementChain(rpcUrl: string): SettlementChain {
  return { client: new ChainClient([rpcUrl], X402_READ_POLICY), logRange: new PageRange(MAX_LOG_RANGE) };
}

/** One SettlementChain per RPC URL the assets name (assets on one chain share it), by URL. */
export function settlementChains(assets: readonly X402Asset[]): Map<string, SettlementChain> {
  return new Map(assets.map((asset) => [asset.rpcUrl, settlementChain(asset.rpcUrl)]));
}

export async function latestBlock(chain: SettlementChain): Promise<bigint> {
  return chain.client.viem.getBlockNumber();
}

export interface SettlementQuery {
  /** The asset's RPC URL (its SettlementChain's). */
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

/**
 * Decide a settlement on the chain, through `chain` (the asset's, which keeps what was learned of
 * its provider); a lone check may leave it out and read through a SettlementChain of its own.
 */
export async function settlementState(query: SettlementQuery, chain = settlementChain(query.rpcUrl)): Promise<SettlementState> {
  const client = chain.client.viem;
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
  const search = { chain, asset, authorizer: query.payer as Address, nonce: query.nonce as Hex, until: query.searchUntil };
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
  search: { chain: SettlementChain; asset: Address; authorizer: Address; nonce: Hex; until?: number },
  eventName: 'AuthorizationUsed' | 'AuthorizationCanceled',
  from: bigint,
  to: bigint,
) {
  const client = search.chain.client.viem;
  const range = search.chain.logRange;
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
