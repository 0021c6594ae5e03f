/**
 * Pay on 402: an x402 payment tops up the caller's prepaid balance, once. The order of a payment:
 * parse it, match it against what was offered (amount, asset, network, pay-to, window, payer =
 * wallet), claim its id (`<network>:<nonce>`) in the payment records, ask the facilitator to
 * verify, then to settle, then credit the ledger through `creditExternal` (source `x402`, the same
 * id), so a payment counts once whatever retries, replays or reconciliation do. The gateway never
 * signs or broadcasts anything: settlement is the facilitator's.
 *
 * A settlement whose outcome is unknown stays a pending record; `reconcile` (on a timer, and when
 * the client retries the same payment) reads the token's `authorizationState(payer, nonce)` and
 * the transaction that spent the nonce (x402/settlement-reads.ts): credited when it paid us,
 * forgotten when it paid someone else or the authorization expired unused.
 *
 * @example
 *   const payments = new X402Payments({ config: config.x402, ledger, records, logger, chains: settlementChains(config.x402.assets) })
 *   const settled = await payments.pay(wallet, ctx.get('payment-signature'), resourceUrl)
 */
import type { X402Asset, X402Config } from '../config.js';
import { ChainUnavailable, FacilitatorUnavailable, PaymentInvalid, PaymentPending, zodIssue } from '../errors.js';
import type { Ledger } from '../ledger/ledger.js';
import type { X402PaymentRecord, X402PaymentRecords } from './payment-records.js';
import type { Logger } from '../logger.js';
import type { Counter } from 'prom-client';
import { FacilitatorClient } from './facilitator-client.js';
import { X402Offers } from './offer.js';
import { latestBlock, settlementState, type SettlementChain, type SettlementState } from './settlement-reads.js';
import {
  decodeHeader,
  encodeHeader,
  PAYMENT_REQUIRED_HEADER,
  paymentPayloadSchema,
  type PaymentPayload,
  type PaymentRequirements,
  type SettleResponse,
} from './wire.js';

/** Facilitator error reasons that say the transfer may still land (the exact scheme's `settlement_pending`). */
const PENDING_REASON = /pending|timeout|timed_out/i;
/** How many pending records one reconcile pass reads. */
const RECONCILE_BATCH = 100;
/** The claim's block read may not hold a payment up longer than this (then 503 `chain_unavailable`, nothing claimed). */
const BLOCK_READ_TIMEOUT_MS = 3_000;
/** How long a client's request may search the chain for its payment's settlement before it is told `payment_pending`. */
const REQUEST_SEARCH_MS = 5_000;

type Refuse = (reason: string, message: string) => PaymentInvalid;

/** A payment's record id: one authorization nonce per network. */
function paymentId(network: string, nonce: string): string {
  return `${network}:${nonce.toLowerCase()}`;
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** What PAYMENT-RESPONSE says of a payment credited before (replayed, or reconciled): the transaction when known. */
function settledResponse(record: X402PaymentRecord): SettleResponse {
  return { success: true, transaction: record.transaction ?? '', network: record.network, payer: record.wallet };
}

export interface X402PaymentsDeps {
  config: X402Config;
  ledger: Ledger;
  records: X402PaymentRecords;
  logger: Logger;
  /** Counts each payment's outcome (`switchyard_x402_payments_total`). */
  outcomes?: Counter<'outcome'>;
  /** Where each asset's chain is read, by its RPC URL (`settlementChains(config.assets)`). */
  chains: ReadonlyMap<string, SettlementChain>;
}

export class X402Payments {
  private readonly offers: X402Offers;
  private readonly facilitator: FacilitatorClient;
  private timer: NodeJS.Timeout | undefined;
  private reconciling: Promise<void> | undefined;

  constructor(private readonly deps: X402PaymentsDeps) {
    const { config } = deps;
    this.offers = new X402Offers(config);
    this.facilitator = new FacilitatorClient({
      url: config.facilitatorUrl,
      headers: config.facilitatorHeaders,
      verifyTimeoutMs: config.verifyTimeoutMs,
      settleTimeoutMs: config.settleTimeoutMs,
    });
  }

  /** The headers of a 402 that offers top-ups to a request `shortfall` credits short. */
  offerHeaders(resourceUrl: string, shortfall: number, error?: string): Record<string, string> {
    return { [PAYMENT_REQUIRED_HEADER]: encodeHeader(this.offers.paymentRequired(resourceUrl, shortfall, error)) };
  }

  /**
   * Take the payment in a PAYMENT-SIGNATURE header for `wallet`: credited (or credited before,
   * for the same payment sent again) → its settlement, for the PAYMENT-RESPONSE header.
   * PaymentInvalid (402) when refused, FacilitatorUnavailable (503) when nothing could be
   * settled, PaymentPending (503) when the settlement's outcome is not known yet.
   */
  async pay(wallet: string, header: string, resourceUrl: string): Promise<SettleResponse> {
    try {
      const { settled, outcome } = await this.take(wallet, header, resourceUrl);
      this.count(outcome);
      return settled;
    } catch (err) {
      if (err instanceof PaymentInvalid) this.count('refused');
      else if (err instanceof PaymentPending) this.count('pending');
      else if (err instanceof FacilitatorUnavailable) this.count('facilitator_unavailable');
      throw err;
    }
  }

  /** The payment taken: newly `credited`, or `replayed` (recorded before: credited then, or reconciled now). */
  private async take(wallet: string, header: string, resourceUrl: string): Promise<{ settled: SettleResponse; outcome: string }> {
    const refuse: Refuse = (reason, message) => new PaymentInvalid(reason, message, this.offerHeaders(resourceUrl, 0, reason));
    const parsed = paymentPayloadSchema.safeParse(decodeHeader(header));
    if (!parsed.success)
      throw refuse('invalid_payload', `PAYMENT-SIGNATURE is not an x402 v2 exact EVM payment: ${zodIssue(parsed.error).message}`);
    const payload = parsed.data;
    const { authorization } = payload.payload;
    const signature = payload.payload.signature.toLowerCase();
    // A payment sent again is known by its record before anything is judged anew: its window may
    // have closed or the chain be unreachable since, yet a credited one is still a replay, and a
    // pending one is still decided from the chain.
    const known = await this.deps.records.find(paymentId(payload.accepted.network, authorization.nonce));
    if (known) return { settled: await this.again(known, wallet, signature, refuse), outcome: 'replayed' };
    const match = this.offers.match(payload, wallet, nowSeconds());
    if (!match.asset) throw refuse(match.reason, match.message);
    const fromBlock = await this.claimBlock(match.asset);
    const record: X402PaymentRecord = {
      id: paymentId(match.asset.network, authorization.nonce),
      wallet,
      network: match.asset.network,
      asset: match.asset.address.toLowerCase(),
      amount: BigInt(authorization.value),
      nonce: authorization.nonce.toLowerCase(),
      signature,
      validBefore: Number(authorization.validBefore),
      fromBlock,
      payTo: this.deps.config.payTo.toLowerCase(),
      unitsPerCredit: BigInt(match.asset.unitsPerCredit),
      state: 'pending',
      transaction: null,
    };
    const earlier = await this.deps.records.claim(record);
    if (earlier) return { settled: await this.again(earlier, wallet, signature, refuse), outcome: 'replayed' };
    return { settled: await this.verifyAndSettle(payload, match.requirements, record, refuse), outcome: 'credited' };
  }

  /**
   * Settle what can be settled of the pending payments: used authorizations are credited, those
   * expired unused are forgotten, the rest wait for the next pass. Errors are logged per payment.
   */
  reconcile(): Promise<void> {
    this.reconciling ??= (async () => {
      try {
        for (const record of await this.deps.records.pending(RECONCILE_BATCH)) {
          await this.reconcileOne(record).catch((err: unknown) =>
            this.deps.logger.warn({ err, payment: record.id }, 'x402 reconciliation failed'),
          );
        }
      } catch (err) {
        this.deps.logger.warn({ err }, 'x402 reconciliation could not read the pending payments');
      } finally {
        this.reconciling = undefined;
      }
    })();
    return this.reconciling;
  }

  /** Reconcile every `reconcileIntervalMs` until `stop`; say at once whether the facilitator settles what is offered. */
  start(): void {
    this.timer ??= setInterval(() => void this.reconcile(), this.deps.config.reconcileIntervalMs);
    this.timer.unref();
    void this.checkFacilitator();
  }

  /** A warning, never a failed start: the facilitator may come up later, and each payment asks it anyway. */
  private async checkFacilitator(): Promise<void> {
    try {
      const kinds = await this.facilitator.supported();
      const missing = this.deps.config.assets.map((a) => a.network).filter((network) => !kinds.has(`exact ${network}`));
      if (missing.length > 0)
        this.deps.logger.warn({ missing }, 'x402: the facilitator does not list exact payments (x402 v2) on these networks');
      else this.deps.logger.info('x402: the facilitator settles every network offered');
    } catch (err) {
      this.deps.logger.warn({ err: String(err) }, 'x402: the facilitator did not answer GET /supported');
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.reconciling;
  }

  /** A newly claimed payment: the facilitator verifies, then settles; credited once settled. */
  private async verifyAndSettle(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    record: X402PaymentRecord,
    refuse: Refuse,
  ): Promise<SettleResponse> {
    const verdict = await this.forgetOnThrow(record.id, () => this.facilitator.verify(payload, requirements));
    if (!verdict.isValid) {
      await this.deps.records.forget(record.id);
      throw refuse(verdict.invalidReason ?? 'invalid_payment', verdict.invalidMessage ?? 'the facilitator refused the payment');
    }
    const outcome = await this.forgetOnThrow(record.id, () => this.facilitator.settle(payload, requirements));
    if (outcome.kind === 'unknown' || (!outcome.response.success && PENDING_REASON.test(outcome.response.errorReason ?? ''))) {
      const detail = outcome.kind === 'unknown' ? outcome.detail : outcome.response.errorReason;
      this.deps.logger.warn({ payment: record.id, wallet: record.wallet, detail }, 'x402 settlement outcome unknown: pending');
      throw new PaymentPending(this.retryAfterSeconds());
    }
    const settlement = outcome.response;
    if (settlement.success) {
      await this.credit({ ...record, transaction: settlement.transaction });
      return { ...settlement, payer: record.wallet, network: record.network };
    }
    // The chain, not the facilitator's word, decides whether money moved: a transfer that landed is credited.
    const state = await this.reconcileOne(record, { clientWaiting: true }).catch(() => 'unconfirmed' as const);
    if (state === 'paid') return settledResponse(record);
    if (state === 'unconfirmed') throw new PaymentPending(this.retryAfterSeconds());
    // Unused (spent otherwise and expired are forgotten already): the record stays pending until the
    // authorization expires, so a transaction of the failed attempt that lands after all is still
    // credited by the reconciler, searched for from this claim's block. The client signs anew.
    throw refuse(settlement.errorReason ?? 'settlement_failed', settlement.errorMessage ?? 'the facilitator could not settle the payment');
  }

  /** The same payment id again: a replay of a credited payment credits nothing; a pending one is reconciled now. */
  private async again(earlier: X402PaymentRecord, wallet: string, signature: string, refuse: Refuse): Promise<SettleResponse> {
    const reused = () => refuse('nonce_already_used', 'this authorization nonce was already used by another payment; sign a new one');
    // The same signature is the same authorization, so the same payer; the wallet is checked all the same.
    if (earlier.signature !== signature || earlier.wallet !== wallet) throw reused();
    if (earlier.state === 'credited') return settledResponse(earlier);
    const state = await this.reconcileOne(earlier, { clientWaiting: true }).catch(() => 'unconfirmed' as const);
    if (state === 'paid') return settledResponse(earlier);
    if (state === 'spent_otherwise') throw reused();
    if (state === 'expired') throw refuse('authorization_expired', 'this authorization expired before it was settled; sign a new one');
    throw new PaymentPending(this.retryAfterSeconds());
  }

  /**
   * Decide a pending payment from the chain and act on it: `paid` is credited, `spent_otherwise`
   * forgotten, `unused` forgotten once expired; `unconfirmed` (and an asset no longer configured)
   * stays pending. A client waiting on it bounds the log search (REQUEST_SEARCH_MS); past it the
   * payment stays pending for the reconciler, which searches the whole range.
   */
  private async reconcileOne(record: X402PaymentRecord, options: { clientWaiting?: boolean } = {}): Promise<SettlementState> {
    const asset = this.deps.config.assets.find((a) => a.network === record.network && a.address.toLowerCase() === record.asset);
    if (!asset) return 'unconfirmed'; // no longer configured: kept, never guessed at
    const query = {
      rpcUrl: asset.rpcUrl,
      asset: record.asset,
      payer: record.wallet,
      payTo: record.payTo,
      amount: record.amount,
      nonce: record.nonce,
      validBefore: record.validBefore,
      fromBlock: record.fromBlock,
      searchUntil: options.clientWaiting ? Date.now() + REQUEST_SEARCH_MS : undefined,
    };
    const state = await settlementState(query, this.chainOf(asset));
    if (state === 'paid') {
      await this.credit(record);
      this.count('reconciled');
      this.deps.logger.info({ payment: record.id, wallet: record.wallet }, 'x402 pending payment settled on chain: credited');
      return state;
    }
    if (state === 'spent_otherwise') {
      // The payer spent the nonce on something else (another transfer, a cancellation): we were never paid.
      await this.deps.records.forget(record.id);
      this.count('forgotten');
      this.deps.logger.warn(
        { payment: record.id, wallet: record.wallet },
        'x402 pending payment: nonce spent without paying us: forgotten',
      );
      return state;
    }
    if (state === 'expired') {
      await this.deps.records.forget(record.id);
      this.count('forgotten');
      this.deps.logger.info({ payment: record.id, wallet: record.wallet }, 'x402 pending payment expired unused: forgotten');
    }
    return state;
  }

  private async credit(record: X402PaymentRecord): Promise<void> {
    const result = await this.deps.ledger.creditExternal({
      wallet: record.wallet,
      source: 'x402',
      externalId: record.id,
      units: record.amount,
      unitsPerCredit: record.unitsPerCredit,
      remainderKey: `${record.network}:${record.asset}`,
    });
    await this.deps.records.credited(record.id, record.transaction);
    if (result.status === 'credited')
      this.deps.logger.info({ payment: record.id, wallet: record.wallet, credits: result.credits }, 'x402 top-up credited');
  }

  /** A facilitator that never took the payment leaves nothing to reconcile: the claim goes. */
  private async forgetOnThrow<T>(id: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof FacilitatorUnavailable) await this.deps.records.forget(id);
      throw err;
    }
  }

  /**
   * The chain's latest block when a payment is claimed: where the search for its settlement starts.
   * Without it a settlement could only be judged by its nonce, which a payer can spend elsewhere, so
   * a chain that does not answer refuses the payment (503, nothing claimed, charged or credited).
   */
  private async claimBlock(asset: X402Asset): Promise<bigint> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), BLOCK_READ_TIMEOUT_MS)));
    const block = await Promise.race([latestBlock(this.chainOf(asset)).catch(() => null), late]);
    clearTimeout(timer);
    if (block === null) throw new ChainUnavailable(asset.network);
    return block;
  }

  private chainOf(asset: X402Asset): SettlementChain {
    const chain = this.deps.chains.get(asset.rpcUrl);
    if (!chain) throw new Error(`x402: no chain reader for ${asset.network}'s RPC URL`);
    return chain;
  }

  private count(outcome: string): void {
    this.deps.outcomes?.labels({ outcome }).inc();
  }

  private retryAfterSeconds(): number {
    return Math.max(1, Math.ceil(this.deps.config.reconcileIntervalMs / 1000));
  }
}
