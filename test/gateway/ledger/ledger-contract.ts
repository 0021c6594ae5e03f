/**
 * The contract every `Ledger` implementation keeps, as one suite: grant, reserve, extend, settle,
 * release, charge (with no hold), reservation expiry, idempotent grants, never below zero, no overspend under
 * concurrency, API keys' budgets (exact under concurrency, per UTC day, expiry), outside payments
 * (creditExternal) credited once with their remainders kept, and the usage records each step
 * writes in its own commit (read back through the ledger's UsageHistory), their key id the key the
 * step charged. An implementation's test file calls `ledgerContract` with a factory that opens a
 * fresh, empty ledger; nothing here knows how the ledger stores its records.
 *
 * @example
 *   ledgerContract('sqlite ledger', async ({ reservationTtlMs, now }) => {
 *     const ledger = await openMyLedger({ reservationTtlMs, now })
 *     return { ledger, close: () => ledger.stop() }
 *   })
 */
import { describe, test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  ApiKeyExpired,
  ExternalCreditConflict,
  IdempotencyConflict,
  InsufficientCredits,
  KeyBudgetExhausted,
  LedgerTotalTooLarge,
  ReservationClosed,
} from '../../../gateway/errors.js';
import type { ExternalCredit, Ledger } from '../../../gateway/ledger/ledger.js';
import { DAY_MS, NO_KEY_LIMITS, type KeyLimits } from '../../../gateway/ledger/key-budgets.js';
import type { SpendUsage, UsageHistory, UsageRecord } from '../../../gateway/ledger/usage.js';

export interface LedgerUnderTest {
  ledger: Ledger;
  /** The usage records this ledger writes. */
  usage: UsageHistory;
  /** Make every write of a usage record of `wallet` fail (its whole commit with it) until the returned call. */
  refuseUsageWrites(wallet: string): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface LedgerFactoryOptions {
  reservationTtlMs: number;
  /** The ledger's clock: tests move it to expire reservations. */
  now: () => number;
}

export type LedgerFactory = (options: LedgerFactoryOptions) => Promise<LedgerUnderTest>;

const TTL_MS = 60_000;

/** A fresh payment id per call, so ledgers backed by a shared database stay apart. */
function newPaymentId(): string {
  return `1:0x${randomBytes(32).toString('hex')}:0`;
}

/** A fresh lower-case wallet per test, so implementations backed by a shared database stay apart. */
function newWallet(): string {
  return `0x${randomBytes(20).toString('hex')}`;
}

export function ledgerContract(name: string, open: LedgerFactory): void {
  describe(`Ledger contract: ${name}`, () => {
    let clock = 1_700_000_000_000;
    let subject: LedgerUnderTest;
    let ledger: Ledger;
    let wallet: string;

    beforeEach(async () => {
      clock = 1_700_000_000_000;
      subject = await open({ reservationTtlMs: TTL_MS, now: () => clock });
      ledger = subject.ledger;
      wallet = newWallet();
    });
    afterEach(() => subject.close());

    /** total_deposited = credits + held + total_spent, with `held` the caller's open holds. */
    async function assertInvariant(held: number): Promise<void> {
      const balance = await ledger.balance(wallet);
      assert.equal(balance.total_deposited, balance.credits + held + balance.total_spent);
    }

    test('an unknown wallet has a zero balance, addressed in lower case', async () => {
      const balance = await ledger.balance(wallet.toUpperCase().replace('0X', '0x'));
      assert.deepEqual(balance, { address: wallet, credits: 0, total_deposited: 0, total_spent: 0 });
    });

    test('grant adds to credits and total_deposited and returns the balance', async () => {
      assert.deepEqual(await ledger.grant(wallet, 10), { address: wallet, credits: 10, total_deposited: 10, total_spent: 0 });
      assert.deepEqual(await ledger.grant(wallet, 5), { address: wallet, credits: 15, total_deposited: 15, total_spent: 0 });
      assert.deepEqual(await ledger.balance(wallet), { address: wallet, credits: 15, total_deposited: 15, total_spent: 0 });
    });

    test('grant refuses amounts that are not positive integers', async () => {
      for (const amount of [0, -1, 1.5, Number.NaN]) {
        await assert.rejects(() => ledger.grant(wallet, amount), RangeError);
      }
    });

    test('a grant past the largest exact integer is refused and changes nothing', async () => {
      await ledger.grant(wallet, Number.MAX_SAFE_INTEGER - 1);
      await assert.rejects(() => ledger.grant(wallet, 2), LedgerTotalTooLarge);
      assert.equal((await ledger.balance(wallet)).credits, Number.MAX_SAFE_INTEGER - 1);
    });

    test('reserve holds credits; a reservation larger than the balance is InsufficientCredits naming both', async () => {
      await ledger.grant(wallet, 10);
      const hold = await ledger.reserve(wallet, 4);
      assert.equal(hold.wallet, wallet);
      assert.equal(hold.amount, 4);
      assert.equal((await ledger.balance(wallet)).credits, 6);
      await assert.rejects(
        () => ledger.reserve(wallet, 7),
        (err: unknown) =>
          err instanceof InsufficientCredits &&
          err.status === 402 &&
          err.message === 'Insufficient credits: balance is 6, this request needs at least 7.',
      );
      await assertInvariant(4);
    });

    test('reserve refuses amounts that are not positive integers', async () => {
      await ledger.grant(wallet, 10);
      for (const amount of [0, -2, 0.5]) await assert.rejects(async () => ledger.reserve(wallet, amount), RangeError);
    });

    test('extend grows a hold and refuses past the balance', async () => {
      await ledger.grant(wallet, 10);
      const hold = await ledger.reserve(wallet, 3);
      const grown = await ledger.extend(hold, 5);
      assert.equal(grown.id, hold.id);
      assert.equal(grown.amount, 8);
      assert.equal((await ledger.balance(wallet)).credits, 2);
      await assert.rejects(() => ledger.extend(grown, 3), InsufficientCredits);
      assert.equal((await ledger.balance(wallet)).credits, 2);
      await assertInvariant(8);
    });

    test('settle charges min(cost, held), returns the rest, and is idempotent', async () => {
      await ledger.grant(wallet, 10);
      const hold = await ledger.reserve(wallet, 5);
      assert.deepEqual(await ledger.settle(hold, 3), { charged: 3, remaining: 7 });
      assert.deepEqual(await ledger.settle(hold, 3), { charged: 3, remaining: 7 });
      assert.deepEqual(await ledger.balance(wallet), { address: wallet, credits: 7, total_deposited: 10, total_spent: 3 });
      await assertInvariant(0);
    });

    test('never below zero: a cost above the hold charges only the hold', async () => {
      await ledger.grant(wallet, 4);
      const hold = await ledger.reserve(wallet, 4);
      assert.deepEqual(await ledger.settle(hold, 9), { charged: 4, remaining: 0 });
      assert.deepEqual(await ledger.balance(wallet), { address: wallet, credits: 0, total_deposited: 4, total_spent: 4 });
    });

    test('settle with cost 0 returns the whole hold', async () => {
      await ledger.grant(wallet, 4);
      const hold = await ledger.reserve(wallet, 2);
      assert.deepEqual(await ledger.settle(hold, 0), { charged: 0, remaining: 4 });
      assert.equal((await ledger.balance(wallet)).total_spent, 0);
    });

    test('settle refuses a negative or fractional cost', async () => {
      await ledger.grant(wallet, 4);
      const hold = await ledger.reserve(wallet, 2);
      for (const cost of [-1, 0.5]) await assert.rejects(async () => ledger.settle(hold, cost), RangeError);
    });

    test('charge takes the whole amount at once, or nothing and InsufficientCredits naming both', async () => {
      await ledger.grant(wallet, 10);
      assert.deepEqual(await ledger.charge(wallet, 4), { charged: 4, remaining: 6 });
      await assert.rejects(
        () => ledger.charge(wallet, 7),
        (err: unknown) => err instanceof InsufficientCredits && err.balance === 6 && err.needed === 7,
      );
      assert.deepEqual(await ledger.balance(wallet), { address: wallet, credits: 6, total_deposited: 10, total_spent: 4 });
      // Each call is a charge of its own (it has no hold to be idempotent on); any case of the address.
      assert.deepEqual(await ledger.charge(`0x${wallet.slice(2).toUpperCase()}`, 3), { charged: 3, remaining: 3 });
      assert.deepEqual(await ledger.charge(wallet, 3), { charged: 3, remaining: 0 });
      assert.deepEqual(await ledger.charge(wallet, 0), { charged: 0, remaining: 0 });
      assert.deepEqual(await ledger.balance(wallet), { address: wallet, credits: 0, total_deposited: 10, total_spent: 10 });
    });

    test('charge spends only what no hold has taken, counting expired holds as given back', async () => {
      await ledger.grant(wallet, 10);
      const hold = await ledger.reserve(wallet, 6);
      await assert.rejects(
        () => ledger.charge(wallet, 5),
        (err: unknown) => err instanceof InsufficientCredits && err.balance === 4,
      );
      assert.deepEqual(await ledger.charge(wallet, 4), { charged: 4, remaining: 0 });
      await assertInvariant(6);
      await assert.rejects(() => ledger.reserve(wallet, 1), InsufficientCredits);
      clock += TTL_MS + 1;
      // The 6 held came back when the hold expired.
      assert.deepEqual(await ledger.charge(wallet, 6), { charged: 6, remaining: 0 });
      assert.deepEqual(await ledger.settle(hold, 6), { charged: 0, remaining: 0 });
      assert.deepEqual(await ledger.balance(wallet), { address: wallet, credits: 0, total_deposited: 10, total_spent: 10 });
    });

    test('charge on an unknown wallet: 0 answers an empty balance, more is InsufficientCredits', async () => {
      assert.deepEqual(await ledger.charge(wallet, 0), { charged: 0, remaining: 0 });
      await assert.rejects(
        () => ledger.charge(wallet, 1),
        (err: unknown) => err instanceof InsufficientCredits && err.balance === 0,
      );
      assert.deepEqual(await ledger.balance(wallet), { address: wallet, credits: 0, total_deposited: 0, total_spent: 0 });
    });

    test('charge refuses a negative or fractional amount', async () => {
      await ledger.grant(wallet, 4);
      for (const amount of [-1, 0.5]) await assert.rejects(async () => ledger.charge(wallet, amount), RangeError);
      assert.equal((await ledger.balance(wallet)).credits, 4);
    });

    test('200 concurrent charges of 1 beside 100 reserves of 1 on 150 credits: exactly 150 succeed, nothing below zero', async () => {
      await ledger.grant(wallet, 150);
      const [charged, held] = await Promise.all([
        Promise.allSettled(Array.from({ length: 200 }, () => ledger.charge(wallet, 1))),
        Promise.allSettled(Array.from({ length: 100 }, () => ledger.reserve(wallet, 1))),
      ]);
      const ok = [...charged, ...held].filter((outcome) => outcome.status === 'fulfilled').length;
      assert.equal(ok, 150);
      for (const outcome of [...charged, ...held]) {
        if (outcome.status === 'rejected') assert.ok(outcome.reason instanceof InsufficientCredits);
      }
      for (const outcome of held) if (outcome.status === 'fulfilled') await ledger.settle(outcome.value, 1);
      assert.deepEqual(await ledger.balance(wallet), { address: wallet, credits: 0, total_deposited: 150, total_spent: 150 });
    });

    test('release returns every held credit, is idempotent, and a settled hold cannot be released', async () => {
      await ledger.grant(wallet, 10);
      const hold = await ledger.reserve(wallet, 6);
      await ledger.release(hold);
      await ledger.release(hold);
      assert.equal((await ledger.balance(wallet)).credits, 10);
      const second = await ledger.reserve(wallet, 6);
      await ledger.settle(second, 2);
      await ledger.release(second);
      assert.deepEqual(await ledger.balance(wallet), { address: wallet, credits: 8, total_deposited: 10, total_spent: 2 });
    });

    test('a closed hold cannot be extended (ReservationClosed)', async () => {
      await ledger.grant(wallet, 10);
      const settled = await ledger.reserve(wallet, 2);
      await ledger.settle(settled, 1);
      await assert.rejects(() => ledger.extend(settled, 1), ReservationClosed);
      const released = await ledger.reserve(wallet, 2);
      await ledger.release(released);
      await assert.rejects(
        () => ledger.extend(released, 1),
        (err: unknown) => err instanceof ReservationClosed && err.status === 409 && err.code === 'reservation_closed',
      );
      assert.equal((await ledger.balance(wallet)).credits, 9);
    });

    test('a hold past its TTL goes back to the wallet; settling it then charges nothing', async () => {
      await ledger.grant(wallet, 10);
      const hold = await ledger.reserve(wallet, 7);
      clock += TTL_MS - 1;
      assert.equal((await ledger.balance(wallet)).credits, 3);
      clock += 2;
      assert.equal((await ledger.balance(wallet)).credits, 10);
      assert.deepEqual(await ledger.settle(hold, 5), { charged: 0, remaining: 10 });
      await assert.rejects(() => ledger.extend(hold, 1), ReservationClosed);
      assert.deepEqual(await ledger.balance(wallet), { address: wallet, credits: 10, total_deposited: 10, total_spent: 0 });
    });

    test('a hold settled past its TTL, before anything swept it, charges nothing; the wallet gets every expired hold back', async () => {
      await ledger.grant(wallet, 10);
      const settled = await ledger.reserve(wallet, 4);
      await ledger.reserve(wallet, 5);
      clock += TTL_MS + 1;
      assert.deepEqual(await ledger.settle(settled, 3), { charged: 0, remaining: 10 });
      assert.deepEqual(await ledger.balance(wallet), { address: wallet, credits: 10, total_deposited: 10, total_spent: 0 });
    });

    test('a reserve refused for want of credits counts the expired holds it freed', async () => {
      await ledger.grant(wallet, 6);
      await ledger.reserve(wallet, 4);
      clock += TTL_MS + 1;
      await assert.rejects(
        () => ledger.reserve(wallet, 7),
        (err: unknown) => err instanceof InsufficientCredits && err.balance === 6 && err.needed === 7,
      );
      assert.equal((await ledger.reserve(wallet, 6)).amount, 6);
    });

    test('extend renews a hold for another full TTL', async () => {
      await ledger.grant(wallet, 10);
      const hold = await ledger.reserve(wallet, 2);
      clock += TTL_MS - 10;
      await ledger.extend(hold, 1);
      clock += TTL_MS - 10;
      assert.deepEqual(await ledger.settle(hold, 3), { charged: 3, remaining: 7 });
    });

    test('an expired hold frees credits for a new reservation', async () => {
      await ledger.grant(wallet, 5);
      await ledger.reserve(wallet, 5);
      await assert.rejects(() => ledger.reserve(wallet, 1), InsufficientCredits);
      clock += TTL_MS + 1;
      const fresh = await ledger.reserve(wallet, 5);
      assert.equal(fresh.amount, 5);
    });

    test('an idempotent grant applies once and answers the first result to every repeat', async () => {
      const key = `grant-${randomBytes(6).toString('hex')}`;
      const first = await ledger.grant(wallet, 7, key);
      await ledger.grant(wallet, 1);
      const again = await ledger.grant(wallet, 7, key);
      assert.deepEqual(again, first);
      assert.deepEqual(first, { address: wallet, credits: 7, total_deposited: 7, total_spent: 0 });
      assert.equal((await ledger.balance(wallet)).credits, 8);
    });

    test('an idempotency key reused for another amount or wallet is IdempotencyConflict', async () => {
      const key = `grant-${randomBytes(6).toString('hex')}`;
      await ledger.grant(wallet, 7, key);
      await assert.rejects(
        () => ledger.grant(wallet, 8, key),
        (err: unknown) => err instanceof IdempotencyConflict && err.status === 409 && err.code === 'idempotency_key_reused',
      );
      await assert.rejects(() => ledger.grant(newWallet(), 7, key), IdempotencyConflict);
      assert.equal((await ledger.balance(wallet)).credits, 7);
    });

    test('concurrent repeats of one idempotent grant apply it once', async () => {
      const key = `grant-${randomBytes(6).toString('hex')}`;
      const results = await Promise.all(Array.from({ length: 20 }, () => ledger.grant(wallet, 3, key)));
      for (const result of results) assert.equal(result.total_deposited, 3);
      assert.equal((await ledger.balance(wallet)).credits, 3);
    });

    test('200 concurrent reserves of 1 on 50 credits: exactly 50 succeed, and settling them spends exactly 50', async () => {
      await ledger.grant(wallet, 50);
      const outcomes = await Promise.allSettled(
        Array.from({ length: 200 }, async () => {
          const hold = await ledger.reserve(wallet, 1);
          return ledger.settle(hold, 1);
        }),
      );
      const ok = outcomes.filter((o) => o.status === 'fulfilled');
      assert.equal(ok.length, 50);
      for (const o of outcomes) {
        if (o.status === 'rejected') assert.ok(o.reason instanceof InsufficientCredits, String(o.reason));
      }
      assert.deepEqual(await ledger.balance(wallet), { address: wallet, credits: 0, total_deposited: 50, total_spent: 50 });
    });

    /** A deposit of `units` USDC atomic units (6 decimals) at 1000 units per credit. */
    function usdc(units: bigint, externalId = newPaymentId()): ExternalCredit {
      return { wallet, source: 'deposit', externalId, units, unitsPerCredit: 1_000n, remainderKey: '1:0xusdc' };
    }

    test('creditExternal credits whole credits into credits and total_deposited and keeps the remainder', async () => {
      const first = await ledger.creditExternal(usdc(2_500n));
      assert.deepEqual(first, {
        status: 'credited',
        credits: 2,
        remainder: 500n,
        balance: { address: wallet, credits: 2, total_deposited: 2, total_spent: 0 },
      });
      await assertInvariant(0);
    });

    test('remainders below one credit add up across payments, per wallet and remainder key', async () => {
      const other = newWallet();
      assert.equal((await ledger.creditExternal(usdc(600n))).credits, 0);
      assert.equal((await ledger.creditExternal({ ...usdc(600n), remainderKey: '1:0xdai' })).credits, 0);
      assert.equal((await ledger.creditExternal({ ...usdc(600n), wallet: other })).credits, 0);
      const third = await ledger.creditExternal(usdc(1_500n));
      assert.equal(third.credits, 2);
      assert.equal(third.remainder, 100n);
      assert.deepEqual(await ledger.balance(wallet), { address: wallet, credits: 2, total_deposited: 2, total_spent: 0 });
      assert.equal((await ledger.creditExternal({ ...usdc(400n), wallet: other })).credits, 1);
      assert.equal((await ledger.creditExternal({ ...usdc(400n), remainderKey: '1:0xdai' })).remainder, 0n);
    });

    test('a payment credited again (any later call) adds nothing and answers repeat with the first credits', async () => {
      const payment = usdc(3_700n);
      const first = await ledger.creditExternal(payment);
      await ledger.grant(wallet, 1);
      const again = await ledger.creditExternal({ ...payment, wallet: wallet.toUpperCase().replace('0X', '0x') });
      assert.deepEqual(again, {
        status: 'repeat',
        credits: first.credits,
        remainder: 700n,
        balance: { address: wallet, credits: 4, total_deposited: 4, total_spent: 0 },
      });
      // The same id from another source is another payment.
      assert.equal((await ledger.creditExternal({ ...payment, source: 'x402' })).status, 'credited');
    });

    test('a payment below one credit is still recorded once', async () => {
      const payment = usdc(999n);
      assert.equal((await ledger.creditExternal(payment)).status, 'credited');
      assert.deepEqual(await ledger.creditExternal(payment), {
        status: 'repeat',
        credits: 0,
        remainder: 999n,
        balance: { address: wallet, credits: 0, total_deposited: 0, total_spent: 0 },
      });
    });

    test('a payment id credited with another wallet, amount, rate or remainder key is ExternalCreditConflict', async () => {
      const payment = usdc(5_000n);
      await ledger.creditExternal(payment);
      for (const changed of [{ wallet: newWallet() }, { units: 5_001n }, { unitsPerCredit: 100n }, { remainderKey: '1:0xdai' }]) {
        await assert.rejects(
          () => ledger.creditExternal({ ...payment, ...changed }),
          (err: unknown) => err instanceof ExternalCreditConflict && err.status === 409 && err.code === 'external_credit_conflict',
        );
      }
      assert.deepEqual(await ledger.balance(wallet), { address: wallet, credits: 5, total_deposited: 5, total_spent: 0 });
    });

    test('20 concurrent calls for one payment credit it once', async () => {
      const payment = usdc(4_200n);
      const results = await Promise.all(Array.from({ length: 20 }, () => ledger.creditExternal(payment)));
      assert.equal(results.filter((r) => r.status === 'credited').length, 1);
      for (const result of results) assert.equal(result.credits, 4);
      assert.deepEqual(await ledger.balance(wallet), { address: wallet, credits: 4, total_deposited: 4, total_spent: 0 });
    });

    test('30 concurrent payments sharing a remainder lose no unit', async () => {
      const results = await Promise.all(Array.from({ length: 30 }, () => ledger.creditExternal(usdc(150n))));
      assert.equal(
        results.reduce((sum, r) => sum + r.credits, 0),
        4,
      );
      assert.equal((await ledger.creditExternal(usdc(500n))).remainder, 0n);
      assert.deepEqual(await ledger.balance(wallet), { address: wallet, credits: 5, total_deposited: 5, total_spent: 0 });
    });

    test('units beyond 2^53 are exact (an 18-decimal token)', async () => {
      const result = await ledger.creditExternal({ ...usdc(123_456_789_012_345_678_901_234n), unitsPerCredit: 10n ** 15n });
      assert.equal(result.credits, 123_456_789);
      assert.equal(result.remainder, 12_345_678_901_234n);
    });

    test('a payment past the largest exact total is LedgerTotalTooLarge and records nothing', async () => {
      await ledger.grant(wallet, Number.MAX_SAFE_INTEGER - 1);
      const payment = usdc(2_300n);
      await assert.rejects(() => ledger.creditExternal(payment), LedgerTotalTooLarge);
      assert.equal((await ledger.balance(wallet)).total_deposited, Number.MAX_SAFE_INTEGER - 1);
      // Not recorded: the same id with other units is a first payment, not a conflict, and no remainder was kept.
      assert.deepEqual(await ledger.creditExternal({ ...payment, units: 300n }), {
        status: 'credited',
        credits: 0,
        remainder: 300n,
        balance: { address: wallet, credits: Number.MAX_SAFE_INTEGER - 1, total_deposited: Number.MAX_SAFE_INTEGER - 1, total_spent: 0 },
      });
    });

    test('creditExternal refuses units or a rate that are not positive, and empty ids', async () => {
      for (const bad of [{ units: 0n }, { units: -5n }, { unitsPerCredit: 0n }, { externalId: '' }, { remainderKey: '' }]) {
        await assert.rejects(async () => ledger.creditExternal({ ...usdc(1_000n), ...bad }), RangeError);
      }
      assert.equal((await ledger.balance(wallet)).credits, 0);
    });

    const chatUsage = (over: Partial<SpendUsage> = {}): SpendUsage => ({
      kind: 'chat',
      requestId: 'req_1',
      model: 'conductor',
      tools: { web_search: 2, get_price: 1 },
      promptTokens: 900,
      completionTokens: 40,
      ...over,
    });
    const recordsOf = async (owner = wallet) => (await subject.usage.page({ wallet: owner }, 200)).records;
    const withoutIds = (records: UsageRecord[]) => records.map(({ id: _id, at: _at, ...rest }) => rest);

    test('usage: a settle that charges writes one record with what it charged; reserve, extend, release and a repeat write none', async () => {
      await ledger.grant(wallet, 100);
      // The hold names a key without a limits row: not limited, but the record's key id.
      const hold = await ledger.extend(await ledger.reserve(wallet, 10, 'key_a'), 5);
      const other = await ledger.reserve(wallet, 3);
      await ledger.release(other);
      clock += 1_000;
      assert.equal((await ledger.settle(hold, 20, chatUsage())).charged, 15);
      await ledger.settle(hold, 20, chatUsage());
      const records = await recordsOf();
      assert.equal(records.length, 2, 'the settle and the grant');
      assert.deepEqual(withoutIds(records.slice(0, 1)), [
        {
          kind: 'chat',
          request_id: 'req_1',
          key_id: 'key_a',
          model: 'conductor',
          tools: { web_search: 2, get_price: 1 },
          prompt_tokens: 900,
          completion_tokens: 40,
          credits: 15,
          source_id: null,
        },
      ]);
      assert.equal(records[0].at, new Date(clock).toISOString());
      assert.match(records[0].id, /^use_/);
    });

    test('usage: a settle charging 0 or a refused charge writes nothing; a charge writes one', async () => {
      await ledger.grant(wallet, 5);
      await ledger.settle(await ledger.reserve(wallet, 2), 0, chatUsage());
      await assert.rejects(ledger.charge(wallet, 6, { usage: chatUsage() }), InsufficientCredits);
      await ledger.charge(wallet, 0, { usage: chatUsage() });
      await ledger.charge(wallet, 4, {
        usage: chatUsage({ kind: 'tool', model: null, tools: { get_price: 1 }, promptTokens: 0, completionTokens: 0 }),
      });
      const records = await recordsOf();
      assert.deepEqual(
        records.map((r) => [r.kind, r.credits]),
        [
          ['tool', 4],
          ['grant', 5],
        ],
      );
      const balance = await ledger.balance(wallet);
      assert.equal(balance.total_spent, 4);
    });

    test('usage: grants and outside payments write theirs with the source id; repeats write none', async () => {
      await ledger.grant(wallet, 7);
      clock += 1;
      await ledger.grant(wallet, 3, 'grant-key-1');
      await ledger.grant(wallet, 3, 'grant-key-1');
      clock += 1;
      const payment = {
        wallet,
        source: 'x402' as const,
        externalId: newPaymentId(),
        units: 25_000n,
        unitsPerCredit: 10_000n,
        remainderKey: 'usdc',
      };
      await ledger.creditExternal(payment);
      await ledger.creditExternal(payment);
      const deposit = { ...payment, source: 'deposit' as const, externalId: newPaymentId(), units: 10_000n };
      clock += 1;
      await ledger.creditExternal(deposit);
      assert.deepEqual(
        (await recordsOf()).map((r) => [r.kind, r.credits, r.source_id, r.key_id, r.request_id]),
        [
          ['deposit', 1, deposit.externalId, null, null],
          ['x402', 2, payment.externalId, null, null],
          ['grant', 3, 'grant-key-1', null, null],
          ['grant', 7, null, null, null],
        ],
      );
    });

    test('usage: a failed commit leaves neither the step nor its record (charge, settle, grant)', async () => {
      await ledger.grant(wallet, 20);
      const hold = await ledger.reserve(wallet, 5);
      const restore = await subject.refuseUsageWrites(wallet);
      try {
        await assert.rejects(ledger.settle(hold, 4, chatUsage()));
        await assert.rejects(ledger.charge(wallet, 3, { usage: chatUsage() }));
        await assert.rejects(ledger.grant(wallet, 9));
      } finally {
        await restore();
      }
      const balance = await ledger.balance(wallet);
      assert.equal(balance.total_spent, 0, 'no charge without its record');
      assert.equal(balance.total_deposited, 20, 'no grant without its record');
      assert.deepEqual(
        (await recordsOf()).map((r) => r.kind),
        ['grant'],
      );
      // Working again: the next charge and its record land together.
      await ledger.charge(wallet, 2, { usage: chatUsage() });
      assert.equal((await recordsOf()).length, 2);
      assert.equal((await ledger.balance(wallet)).total_spent, 2);
    });

    test('usage: 200 concurrent reserve+settle and charges on 150 credits: one record per step that charged, adding up to total_spent', async () => {
      await ledger.grant(wallet, 150);
      const outcomes = await Promise.allSettled(
        Array.from({ length: 200 }, (_, i) =>
          i % 2 === 0
            ? ledger.charge(wallet, 1, { usage: chatUsage({ requestId: `req_${i}` }) })
            : ledger.reserve(wallet, 2).then((hold) => ledger.settle(hold, 1, chatUsage({ requestId: `req_${i}` }))),
        ),
      );
      const ok = outcomes.filter((o) => o.status === 'fulfilled').length;
      const spends = (await recordsOf()).filter((r) => r.kind === 'chat');
      const balance = await ledger.balance(wallet);
      assert.equal(spends.length, ok);
      assert.equal(new Set(spends.map((r) => r.request_id)).size, ok);
      assert.equal(
        spends.reduce((sum, r) => sum + r.credits, 0),
        balance.total_spent,
      );
    });

    test('usage: newest first, cursor pages, filters and totals; another wallet sees none of them', async () => {
      const day = 86_400_000;
      clock = Date.UTC(2026, 0, 10, 12);
      await ledger.grant(wallet, 1_000);
      const steps: Array<[number, SpendUsage, number, string | undefined]> = [
        [0, chatUsage({ model: 'conductor', requestId: 'r1' }), 5, 'key_a'],
        [day, chatUsage({ model: 'operator', requestId: 'r2' }), 7, 'key_b'],
        [
          day,
          chatUsage({
            kind: 'tool',
            model: null,
            requestId: 'r3',
            tools: { get_price: 1 },
            promptTokens: 0,
            completionTokens: 0,
          }),
          1,
          'key_a',
        ],
        [
          2 * day,
          chatUsage({
            kind: 'mcp',
            model: null,
            requestId: 'r4',
            tools: { web_search: 1 },
            promptTokens: 0,
            completionTokens: 0,
          }),
          1,
          undefined,
        ],
        [2 * day, chatUsage({ model: 'conductor', requestId: 'r5' }), 3, 'key_a'],
      ];
      const start = clock;
      for (const [offset, usage, credits, key] of steps) {
        clock = start + offset;
        await ledger.charge(wallet, credits, key === undefined ? { usage } : { key, usage });
      }
      const other = newWallet();
      await ledger.grant(other, 10);
      await ledger.charge(other, 2, { usage: chatUsage({ requestId: 'not-yours' }) });

      const all = await subject.usage.page({ wallet }, 200);
      assert.deepEqual(
        all.records.map((r) => r.request_id),
        ['r5', 'r4', 'r3', 'r2', 'r1', null],
        'newest first; records of one ms in the order written, newest first',
      );
      assert.equal(all.next, undefined);
      const seen: string[] = [];
      let page = await subject.usage.page({ wallet }, 2);
      for (;;) {
        seen.push(...page.records.map((r) => r.request_id ?? 'grant'));
        if (!page.next) break;
        page = await subject.usage.page({ wallet }, 2, page.next);
      }
      assert.deepEqual(seen, ['r5', 'r4', 'r3', 'r2', 'r1', 'grant']);
      const ids = async (filter: Partial<Parameters<UsageHistory['page']>[0]>) =>
        (await subject.usage.page({ wallet, ...filter }, 200)).records.map((r) => r.request_id);
      assert.deepEqual(await ids({ kind: 'chat' }), ['r5', 'r2', 'r1']);
      assert.deepEqual(await ids({ keyId: 'key_a' }), ['r5', 'r3', 'r1']);
      assert.deepEqual(await ids({ from: start + day, to: start + 2 * day }), ['r3', 'r2']);
      assert.deepEqual(await ids({ from: start + day, kind: 'chat', keyId: 'key_a' }), ['r5']);

      assert.deepEqual(
        await subject.usage.totals({ wallet, kind: 'chat' }, 'model'),
        [
          { group: 'conductor', records: 2, spent: 8, added: 0, prompt_tokens: 1_800, completion_tokens: 80 },
          { group: 'operator', records: 1, spent: 7, added: 0, prompt_tokens: 900, completion_tokens: 40 },
        ].map((t) => ({ ...t })),
      );
      const byKey = await subject.usage.totals({ wallet, from: start }, 'key');
      assert.deepEqual(
        byKey.map((t) => [t.group, Number(t.records), Number(t.spent), Number(t.added)]),
        [
          ['key_a', 3, 9, 0],
          ['key_b', 1, 7, 0],
          [null, 2, 1, 1_000],
        ],
      );
      const byDay = await subject.usage.totals({ wallet }, 'day');
      assert.deepEqual(
        byDay.map((t) => [t.group, Number(t.records), Number(t.spent), Number(t.added)]),
        [
          ['2026-01-12', 2, 4, 0],
          ['2026-01-11', 2, 8, 0],
          ['2026-01-10', 2, 5, 1_000],
        ],
      );
      assert.deepEqual(
        (await subject.usage.page({ wallet: other }, 200)).records.map((r) => r.request_id),
        ['not-yours', null],
      );
    });

    test('usage: a sweep deletes records older than its cutoff and never changes a balance', async () => {
      clock = Date.UTC(2026, 0, 1);
      await ledger.grant(wallet, 50);
      await ledger.charge(wallet, 5, { usage: chatUsage({ requestId: 'old' }) });
      clock += 10 * 86_400_000;
      await ledger.charge(wallet, 4, { usage: chatUsage({ requestId: 'new' }) });
      const before = await ledger.balance(wallet);
      assert.ok((await subject.usage.sweep(clock - 86_400_000)) >= 2);
      assert.deepEqual(
        (await recordsOf()).map((r) => r.request_id),
        ['new'],
      );
      assert.deepEqual(await ledger.balance(wallet), before);
    });

    test('concurrent steps on different wallets do not disturb each other', async () => {
      const others = Array.from({ length: 10 }, newWallet);
      await Promise.all(others.map((other) => ledger.grant(other, 3)));
      await Promise.all(
        others.map(async (other) => {
          const hold = await ledger.reserve(other, 2);
          await ledger.extend(hold, 1);
          await ledger.settle(hold, 2);
        }),
      );
      for (const other of others) {
        assert.deepEqual(await ledger.balance(other), { address: other, credits: 1, total_deposited: 3, total_spent: 2 });
      }
    });

    /** A fresh key id with `limits` stored for the test's wallet. */
    async function keyWith(limits: Partial<KeyLimits>): Promise<string> {
      const keyId = `key_${randomBytes(9).toString('base64url')}`;
      await ledger.setKeyLimits({ keyId, wallet, limits: { ...NO_KEY_LIMITS, ...limits } });
      return keyId;
    }

    test('200 concurrent reserves of 1 on a key capped at 50, wallet 1,000: exactly 50 succeed, the rest KeyBudgetExhausted', async () => {
      await ledger.grant(wallet, 1_000);
      const key = await keyWith({ maxCredits: 50 });
      const outcomes = await Promise.allSettled(
        Array.from({ length: 200 }, async () => {
          const hold = await ledger.reserve(wallet, 1, key);
          return ledger.settle(hold, 1);
        }),
      );
      assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 50);
      for (const o of outcomes) {
        if (o.status === 'rejected') assert.ok(o.reason instanceof KeyBudgetExhausted, String(o.reason));
      }
      assert.deepEqual(await ledger.balance(wallet), { address: wallet, credits: 950, total_deposited: 1_000, total_spent: 50 });
      const usage = (await ledger.keyUsage([key])).get(key);
      assert.equal(usage?.spent, 50);
      assert.equal(usage?.spentToday, 50);
    });

    test('200 concurrent charges of 1 on a key capped at 50: exactly 50 succeed and the last answers keyRemaining 0', async () => {
      await ledger.grant(wallet, 1_000);
      const key = await keyWith({ maxCredits: 50 });
      const outcomes = await Promise.allSettled(Array.from({ length: 200 }, () => ledger.charge(wallet, 1, { key })));
      const ok = outcomes.filter((o) => o.status === 'fulfilled');
      assert.equal(ok.length, 50);
      assert.equal(Math.min(...ok.map((o) => o.value.keyRemaining ?? -1)), 0);
      const refused = outcomes.find((o) => o.status === 'rejected');
      assert.ok(refused?.reason instanceof KeyBudgetExhausted && refused.reason.remaining === 0);
      assert.equal((await ledger.balance(wallet)).credits, 950);
    });

    test("a key's holds count against its budget until settled or released; a refused key takes nothing from the wallet", async () => {
      await ledger.grant(wallet, 100);
      const key = await keyWith({ maxCredits: 10 });
      const first = await ledger.reserve(wallet, 6, key);
      await assert.rejects(ledger.reserve(wallet, 5, key), KeyBudgetExhausted);
      await assert.rejects(ledger.extend(first, 5), KeyBudgetExhausted);
      assert.equal((await ledger.balance(wallet)).credits, 94);
      await ledger.release(first);
      const second = await ledger.reserve(wallet, 10, key);
      assert.deepEqual(await ledger.settle(second, 4), { charged: 4, remaining: 96, keyRemaining: 6 });
      // Another key of the same wallet is not limited by this one.
      const other = await keyWith({ maxCredits: 100 });
      assert.equal((await ledger.charge(wallet, 20, { key: other })).keyRemaining, 80);
    });

    test('a key with no limits row is not limited; a hold TTL gives the key its budget back', async () => {
      await ledger.grant(wallet, 100);
      assert.equal((await ledger.charge(wallet, 60, { key: 'key_unlimited_' + randomBytes(4).toString('hex') })).keyRemaining, Infinity);
      const key = await keyWith({ maxCredits: 5 });
      await ledger.reserve(wallet, 5, key);
      await assert.rejects(ledger.charge(wallet, 1, { key }), KeyBudgetExhausted);
      clock += TTL_MS + 1;
      assert.equal((await ledger.charge(wallet, 5, { key })).keyRemaining, 0);
    });

    test('a settle never takes a key past its cap, even when the cap was lowered under an open hold', async () => {
      await ledger.grant(wallet, 100);
      const key = await keyWith({ maxCredits: 10 });
      const hold = await ledger.reserve(wallet, 10, key);
      await ledger.setKeyLimits({ keyId: key, wallet, limits: { ...NO_KEY_LIMITS, maxCredits: 4 } });
      const settled = await ledger.settle(hold, 10);
      assert.equal(settled.charged, 4);
      assert.equal(settled.remaining, 96);
      assert.equal((await ledger.keyUsage([key])).get(key)?.spent, 4);
    });

    test('usage + key budget: a capped settle and a charge on a limited key record what they charged, under the key; a refused charge records nothing', async () => {
      await ledger.grant(wallet, 100);
      const key = await keyWith({ maxCredits: 10 });
      const hold = await ledger.reserve(wallet, 8, key);
      await ledger.setKeyLimits({ keyId: key, wallet, limits: { ...NO_KEY_LIMITS, maxCredits: 6 } });
      assert.equal((await ledger.settle(hold, 8, chatUsage({ requestId: 'capped' }))).charged, 6);
      await assert.rejects(ledger.charge(wallet, 1, { key, usage: chatUsage({ requestId: 'refused' }) }), KeyBudgetExhausted);
      await ledger.setKeyLimits({ keyId: key, wallet, limits: { ...NO_KEY_LIMITS, maxCredits: 9 } });
      const charged = await ledger.charge(wallet, 3, { key, usage: chatUsage({ kind: 'tool', requestId: 'charged', model: null }) });
      assert.equal(charged.keyRemaining, 0);
      assert.deepEqual(
        (await recordsOf()).map((r) => [r.kind, r.request_id, r.key_id, r.credits]),
        [
          ['tool', 'charged', key, 3],
          ['chat', 'capped', key, 6],
          ['grant', null, null, 100],
        ],
      );
      assert.equal((await ledger.keyUsage([key])).get(key)?.spent, 9);
      assert.equal((await ledger.balance(wallet)).total_spent, 9);
    });

    test('the daily cap counts the UTC day of each charge and starts again at midnight UTC (injected clock)', async () => {
      clock = 3 * DAY_MS + DAY_MS - 1_000; // one second before a UTC midnight
      await ledger.grant(wallet, 100);
      const key = await keyWith({ maxCreditsPerDay: 5, maxCredits: 12 });
      await ledger.charge(wallet, 5, { key });
      await assert.rejects(ledger.charge(wallet, 1, { key }), KeyBudgetExhausted);
      const hold = await ledger.reserve(wallet, 0 + 1, key).catch((err: unknown) => err);
      assert.ok(hold instanceof KeyBudgetExhausted);
      clock += 1_000; // midnight: a new day
      assert.equal((await ledger.keyUsage([key])).get(key)?.spentToday, 0);
      assert.equal((await ledger.charge(wallet, 5, { key })).keyRemaining, 0);
      clock += DAY_MS;
      // The lifetime cap (12) leaves 2 on the third day.
      await assert.rejects(ledger.charge(wallet, 3, { key }), KeyBudgetExhausted);
      const third = await ledger.charge(wallet, 2, { key });
      assert.equal(third.keyRemaining, 0);
      const usage = (await ledger.keyUsage([key])).get(key);
      assert.deepEqual([usage?.spent, usage?.spentToday], [12, 2]);
      assert.equal((await ledger.balance(wallet)).credits, 88);
    });

    test('a hold taken before midnight and settled after counts on the day of the settle', async () => {
      clock = 10 * DAY_MS - 1_000;
      await ledger.grant(wallet, 100);
      const key = await keyWith({ maxCreditsPerDay: 5 });
      const hold = await ledger.reserve(wallet, 5, key);
      clock += 2_000;
      assert.equal((await ledger.settle(hold, 3)).charged, 3);
      const usage = (await ledger.keyUsage([key])).get(key);
      assert.equal(usage?.spentToday, 3);
    });

    test('an expired key is refused new holds and charges (ApiKeyExpired); a hold taken before settles', async () => {
      await ledger.grant(wallet, 100);
      const key = await keyWith({ expiresAt: clock + 1_000 });
      const hold = await ledger.reserve(wallet, 5, key);
      clock += 1_000;
      await assert.rejects(ledger.reserve(wallet, 1, key), ApiKeyExpired);
      await assert.rejects(ledger.charge(wallet, 1, { key }), ApiKeyExpired);
      assert.equal((await ledger.settle(hold, 5)).charged, 5);
      assert.equal((await ledger.balance(wallet)).credits, 95);
    });

    test('setKeyLimits keeps the spend counters; keyUsage answers only keys with limits', async () => {
      await ledger.grant(wallet, 100);
      const key = await keyWith({ maxCredits: 10, tools: ['calculator', 'search:*'], models: ['m1'] });
      await ledger.charge(wallet, 7, { key });
      await ledger.setKeyLimits({ keyId: key, wallet, limits: { ...NO_KEY_LIMITS, maxCredits: 20 } });
      const usage = await ledger.keyUsage([key, 'key_none']);
      assert.deepEqual([...usage.keys()], [key]);
      assert.deepEqual(usage.get(key), { keyId: key, wallet, limits: { ...NO_KEY_LIMITS, maxCredits: 20 }, spent: 7, spentToday: 7 });
      assert.equal((await ledger.charge(wallet, 13, { key })).keyRemaining, 0);
    });
  });
}
