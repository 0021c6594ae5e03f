/**
 * The credit ledger: no overspend under 200 concurrent reserve+settle, exact settle/extend/
 * release semantics, idempotent grants over the admin API, reservation expiry (timer and on
 * access), survival across a restart, and the charging helper.
 */
import { NO_KEY_LIMITS } from '../../../gateway/ledger/key-budgets.js';
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authHeaders, apiKeyFor, walletHeaders, type TestGateway } from '../../helpers/gateway.js';
import { GatewayError } from '../../../gateway/errors.js';
import { ledgerCharger, NO_CHARGE, withCharge } from '../../../gateway/ledger/charging.js';
import { ADMIN_TOKEN, ALICE, BOB, call, errorOf, startAccountsGateway } from '../../helpers/accounts.js';

/** The usage record's origin for charges these tests open. */
const ORIGIN = { kind: 'tool' as const, requestId: 'req_test', model: null };

const alice = ALICE.address.toLowerCase();
const bob = BOB.address.toLowerCase();
const adminHeaders = (idempotencyKey?: string) => ({
  authorization: `Bearer ${ADMIN_TOKEN}`,
  'content-type': 'application/json',
  ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
});

function grant(gw: TestGateway, address: string, amount: unknown, idempotencyKey?: string) {
  return call(`${gw.url}/admin/credits/grant`, { method: 'POST', headers: adminHeaders(idempotencyKey), body: { address, amount } });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('ledger behind a running gateway', () => {
  let gw: TestGateway;
  let aliceKey: string;
  before(async () => {
    gw = await startAccountsGateway();
    aliceKey = await apiKeyFor(gw, alice);
  });
  after(() => gw.stop());

  test('200 concurrent reserve+settle of 1 on a wallet holding 50: exactly 50 succeed', async () => {
    const wallet = '0x' + '1'.repeat(40);
    assert.equal((await grant(gw, wallet, 50, 'race-50')).status, 200);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 200 }, async () => {
        const hold = await gw.ledger.reserve(wallet, 1);
        return gw.ledger.settle(hold, 1);
      }),
    );
    const ok = outcomes.filter((o) => o.status === 'fulfilled');
    assert.equal(ok.length, 50);
    for (const o of outcomes) {
      if (o.status === 'fulfilled') assert.equal(o.value.charged, 1);
      else {
        assert.ok(o.reason instanceof GatewayError);
        assert.equal(o.reason.status, 402);
        assert.equal(o.reason.code, 'insufficient_credits');
        assert.match(o.reason.message, /^Insufficient credits: balance is 0, this request needs at least 1\.$/);
      }
    }
    assert.deepEqual(await gw.ledger.balance(wallet), { address: wallet, credits: 0, total_deposited: 50, total_spent: 50 });
    const key = await apiKeyFor(gw, wallet);
    const answer = await call(`${gw.url}/credits/balance`, { headers: authHeaders(key, wallet) });
    assert.deepEqual(answer.body, { address: wallet, credits: 0, total_deposited: 50, total_spent: 50 });
  });

  test('an unknown wallet is all zeros', async () => {
    const answer = await call(`${gw.url}/credits/balance`, { headers: authHeaders(aliceKey, alice) });
    assert.deepEqual(answer.body, { address: alice, credits: 0, total_deposited: 0, total_spent: 0 });
  });

  test('settle charges min(cost, reserved); settle and release are idempotent; extend holds more', async () => {
    await gw.ledger.grant(bob, 20);
    const hold = await gw.ledger.reserve(bob, 5);
    assert.deepEqual(hold, { id: hold.id, wallet: bob, amount: 5 });
    assert.equal((await gw.ledger.balance(bob)).credits, 15);
    const bigger = await gw.ledger.extend(hold, 3);
    assert.equal(bigger.amount, 8);
    assert.equal((await gw.ledger.balance(bob)).credits, 12);
    await assert.rejects(gw.ledger.extend(bigger, 13), {
      status: 402,
      code: 'insufficient_credits',
      message: 'Insufficient credits: balance is 12, this request needs at least 13.',
    });
    assert.deepEqual(await gw.ledger.settle(bigger, 100), { charged: 8, remaining: 12 });
    assert.deepEqual(await gw.ledger.settle(bigger, 100), { charged: 8, remaining: 12 });
    await gw.ledger.release(bigger); // after settle: nothing to give back
    assert.deepEqual(await gw.ledger.balance(bob), { address: bob, credits: 12, total_deposited: 20, total_spent: 8 });
    await assert.rejects(gw.ledger.extend(bigger, 1), { status: 409, code: 'reservation_closed' });

    const second = await gw.ledger.reserve(bob, 4);
    assert.deepEqual(await gw.ledger.settle(second, 2), { charged: 2, remaining: 10 });
    const third = await gw.ledger.reserve(bob, 10);
    await gw.ledger.release(third);
    await gw.ledger.release(third);
    assert.deepEqual(await gw.ledger.settle(third, 5), { charged: 0, remaining: 10 });
    assert.deepEqual(await gw.ledger.balance(bob), { address: bob, credits: 10, total_deposited: 20, total_spent: 10 });
    await assert.rejects(async () => gw.ledger.reserve(bob, 0), RangeError);
    await assert.rejects(async () => gw.ledger.settle(third, 1.5), RangeError);
  });

  test('admin grants: Idempotency-Key makes a repeat return the first result and grant nothing', async () => {
    const wallet = '0x' + '2'.repeat(40);
    const first = await grant(gw, wallet, 30, 'grant-abc');
    assert.equal(first.status, 200);
    assert.deepEqual(first.body, { address: wallet, credits: 30, total_deposited: 30, total_spent: 0, granted: 30 });
    const repeats = await Promise.all(Array.from({ length: 10 }, () => grant(gw, wallet, 30, 'grant-abc')));
    for (const r of repeats) assert.deepEqual(r.body, first.body);
    assert.equal((await gw.ledger.balance(wallet)).total_deposited, 30);
    const reused = await grant(gw, wallet, 31, 'grant-abc');
    assert.deepEqual(errorOf(reused), { status: 409, code: 'idempotency_key_reused', type: 'invalid_request_error' });
    assert.equal(reused.body.error.param, 'Idempotency-Key');
    // Ten different keys at once: ten grants.
    await Promise.all(Array.from({ length: 10 }, (_, i) => grant(gw, wallet, 1, `grant-many-${i}`)));
    assert.equal((await gw.ledger.balance(wallet)).total_deposited, 40);
    const byGet = await call(`${gw.url}/admin/credits/0x1234`, { headers: adminHeaders() });
    assert.deepEqual([byGet.status, byGet.body.error.code, byGet.body.error.param], [400, 'invalid_wallet_address', 'address']);
    assert.deepEqual((await call(`${gw.url}/admin/credits/${wallet}`, { headers: adminHeaders() })).body, {
      address: wallet,
      credits: 40,
      total_deposited: 40,
      total_spent: 0,
    });
  });

  test('admin grant input errors', async () => {
    const missingKey = await grant(gw, alice, 5);
    assert.deepEqual(
      [missingKey.status, missingKey.body.error.code, missingKey.body.error.param],
      [400, 'missing_idempotency_key', 'Idempotency-Key'],
    );
    for (const amount of [0, -1, 1.5, '5', 1e13]) {
      const answer = await grant(gw, alice, amount, `bad-${amount}`);
      assert.deepEqual(
        [answer.status, answer.body.error.code, answer.body.error.param],
        [400, 'invalid_request', 'amount'],
        String(amount),
      );
    }
    const asText = await fetch(`${gw.url}/admin/credits/grant`, {
      method: 'POST',
      headers: { ...adminHeaders('as-text'), 'content-type': 'text/plain' },
      body: JSON.stringify({ address: alice, amount: 5 }),
    });
    assert.deepEqual([asText.status, (await asText.json()).error.code], [415, 'unsupported_media_type']);
    const badAddress = await grant(gw, '0x1234', 5, 'bad-address');
    assert.deepEqual(
      [badAddress.status, badAddress.body.error.code, badAddress.body.error.param],
      [400, 'invalid_wallet_address', 'address'],
    );
    assert.equal((await gw.ledger.balance(alice)).total_deposited, 0);
  });

  test('a grant that would take total_deposited past MAX_SAFE_INTEGER is 400 and grants nothing', async () => {
    const rich = '0x' + '5'.repeat(40);
    await gw.ledger.grant(rich, Number.MAX_SAFE_INTEGER - 10);
    const refused = await grant(gw, rich, 11, 'overflow-1');
    assert.deepEqual(errorOf(refused), { status: 400, code: 'ledger_total_too_large', type: 'invalid_request_error' });
    assert.equal(refused.body.error.param, 'amount');
    assert.equal((await gw.ledger.balance(rich)).total_deposited, Number.MAX_SAFE_INTEGER - 10);
    // Up to the limit exactly is still fine.
    const last = await grant(gw, rich, 10, 'overflow-2');
    assert.equal(last.status, 200);
    assert.equal(last.body.total_deposited, Number.MAX_SAFE_INTEGER);
  });
});

describe('reservation expiry', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startAccountsGateway({
      accounts: { reservationTtlMs: 300 },
      // The TTL must outlast every piece of work (config refuses otherwise).
      config: (json) => {
        json.chat = { deadlineMs: 200 };
        for (const model of json.models as Array<{ upstream: Record<string, unknown> }>) model.upstream.timeoutMs = 200;
      },
    });
  });
  after(() => gw.stop());

  test('an unsettled reservation is released after its TTL; a late settle charges nothing', async () => {
    const wallet = '0x' + '3'.repeat(40);
    await gw.ledger.grant(wallet, 10);
    const hold = await gw.ledger.reserve(wallet, 7);
    assert.equal((await gw.ledger.balance(wallet)).credits, 3);
    await sleep(900);
    const key = await apiKeyFor(gw, wallet);
    assert.deepEqual((await call(`${gw.url}/credits/balance`, { headers: authHeaders(key, wallet) })).body, {
      address: wallet,
      credits: 10,
      total_deposited: 10,
      total_spent: 0,
    });
    assert.deepEqual(await gw.ledger.settle(hold, 7), { charged: 0, remaining: 10 });
    await assert.rejects(gw.ledger.extend(hold, 1), { code: 'reservation_closed' });
  });

  test('extend keeps a live reservation alive for another TTL', async () => {
    const wallet = '0x' + '4'.repeat(40);
    await gw.ledger.grant(wallet, 10);
    let hold = await gw.ledger.reserve(wallet, 2);
    // Five gaps of 100 ms: together longer than the 300 ms TTL, each well inside it.
    for (let i = 0; i < 5; i++) {
      await sleep(100);
      hold = await gw.ledger.extend(hold, 1);
    }
    assert.deepEqual(await gw.ledger.settle(hold, 7), { charged: 7, remaining: 3 });
  });
});

describe('balances survive a restart', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-restart-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  test('grants, spends and keys are there after stop and start', async () => {
    let gw = await startAccountsGateway({ dataDir });
    const key = await apiKeyFor(gw, alice);
    await grant(gw, alice, 25, 'restart-1');
    await gw.ledger.settle(await gw.ledger.reserve(alice, 5), 4);
    await gw.stop();
    gw = await startAccountsGateway({ dataDir });
    try {
      const answer = await call(`${gw.url}/credits/balance`, { headers: authHeaders(key, alice) });
      assert.deepEqual(answer.body, { address: alice, credits: 21, total_deposited: 25, total_spent: 4 });
      // The idempotency record survived too.
      assert.equal((await grant(gw, alice, 25, 'restart-1')).body.total_deposited, 25);
      assert.equal((await gw.ledger.balance(alice)).total_deposited, 25);
    } finally {
      await gw.stop();
    }
  });
});

describe('charging helper', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startAccountsGateway();
  });
  after(() => gw.stop());

  test('reserve, run, settle the reported cost; release when the work throws', async () => {
    const wallet = '0x' + '7'.repeat(40);
    const charger = ledgerCharger(gw.ledger);
    await gw.ledger.grant(wallet, 10);
    const result = await withCharge(charger, { wallet }, ORIGIN, 4, async () => {
      assert.equal((await gw.ledger.balance(wallet)).credits, 6);
      return { result: 'done', cost: 3 };
    });
    assert.equal(result, 'done');
    assert.deepEqual(await gw.ledger.balance(wallet), { address: wallet, credits: 7, total_deposited: 10, total_spent: 3 });
    await assert.rejects(
      withCharge(charger, { wallet }, ORIGIN, 3, async () => {
        throw new Error('tool failed');
      }),
      /tool failed/,
    );
    assert.deepEqual(await gw.ledger.balance(wallet), { address: wallet, credits: 7, total_deposited: 10, total_spent: 3 });
    await assert.rejects(
      withCharge(charger, { wallet }, ORIGIN, 8, async () => ({ result: 1, cost: 1 })),
      {
        status: 402,
        code: 'insufficient_credits',
        message: 'Insufficient credits: balance is 7, this request needs at least 8.',
      },
    );
  });

  test('a charge: cover grows the hold, settles once, and a release after settling changes nothing', async () => {
    const wallet = '0x' + '8'.repeat(40);
    await gw.ledger.grant(wallet, 10);
    const charge = ledgerCharger(gw.ledger).begin({ wallet }, ORIGIN);
    assert.equal(await charge.cover(2), true);
    assert.equal(await charge.cover(1), true, 'already held');
    assert.equal(await charge.cover(6), true);
    assert.equal((await gw.ledger.balance(wallet)).credits, 4);
    assert.equal(await charge.cover(11), false, 'the wallet cannot give 5 more');
    assert.deepEqual(await charge.settle(5), { charged: 5, remaining: 5 });
    assert.deepEqual(await charge.settle(9), { charged: 5, remaining: 5 }, 'only the first settle charges');
    await charge.release();
    assert.equal(await charge.cover(1), false, 'a closed charge holds nothing more');
    assert.deepEqual(await gw.ledger.balance(wallet), { address: wallet, credits: 5, total_deposited: 10, total_spent: 5 });
    const unused = ledgerCharger(gw.ledger).begin({ wallet }, ORIGIN);
    assert.equal(await unused.settle(3), undefined, 'nothing held, nothing charged');
  });

  test("with a key: the shortcuts wait until the key's remaining is known, then count min(wallet, key), and a settle never passes its cap", async () => {
    const wallet = '0x' + '6'.repeat(40);
    await gw.ledger.grant(wallet, 1_000);
    const unlimited = ledgerCharger(gw.ledger).begin({ wallet }, ORIGIN);
    await unlimited.cover(1);
    await unlimited.settle(1); // the wallet's balance is now known: 999
    const keyId = 'key_shortcuts';
    await gw.ledger.setKeyLimits({ keyId, wallet, limits: { ...NO_KEY_LIMITS, maxCredits: 10 } });
    const charger = ledgerCharger(gw.ledger);
    charger.begin({ wallet }, ORIGIN).claimRunAhead(1); // (learns nothing of the key)
    const first = charger.begin({ wallet, key: keyId }, ORIGIN);
    assert.equal(first.claimRunAhead(1), false, "the key's remaining is not known yet");
    assert.equal(first.claimChargeAtEnd(1), false);
    await first.cover(2);
    assert.deepEqual(await first.settle(2), { charged: 2, remaining: 997 }, 'the answer carries no key field');
    assert.equal(charger.begin({ wallet, key: keyId }, ORIGIN).claimRunAhead(5), false, '8 left of the key does not cover 2 × 5');
    const atEnd = charger.begin({ wallet, key: keyId }, ORIGIN);
    assert.equal(atEnd.claimChargeAtEnd(4), true, '8 left covers 2 × 4');
    assert.equal(charger.begin({ wallet, key: keyId }, ORIGIN).claimRunAhead(3), false, 'the claim counts against the key');
    assert.equal(charger.begin({ wallet }, ORIGIN).claimRunAhead(100), true, 'the wallet alone has plenty');
    // Other work spends the key meanwhile: the charge at the end takes only what the key has left.
    await gw.ledger.charge(wallet, 6, { key: keyId });
    assert.deepEqual(await atEnd.settle(4), { charged: 2, remaining: 989 });
    assert.equal((await gw.ledger.keyUsage([keyId])).get(keyId)?.spent, 10);
    await assert.rejects(
      withCharge(charger, { wallet, key: keyId }, ORIGIN, 1, async () => ({ result: 1, cost: 1 })),
      {
        status: 402,
        code: 'key_budget_exhausted',
      },
    );
  });

  test('a charge may run ahead of its first hold only when the balance last seen covers it twice over, and each run counts', async () => {
    const wallet = '0x' + '9'.repeat(40);
    await gw.ledger.grant(wallet, 10);
    const charger = ledgerCharger(gw.ledger);
    const first = charger.begin({ wallet }, ORIGIN);
    assert.equal(first.claimRunAhead(1), false, 'no balance seen yet');
    await first.cover(2);
    await first.settle(2);
    assert.equal(charger.begin({ wallet }, ORIGIN).claimRunAhead(5), false, '8 seen does not cover 2 × 5');
    const second = charger.begin({ wallet }, ORIGIN);
    assert.equal(second.claimRunAhead(4), true, '8 seen covers 2 × 4');
    // The claim counted: 4 of the 8 are spoken for until the ledger answers.
    assert.equal(charger.begin({ wallet }, ORIGIN).claimRunAhead(3), false, '4 left does not cover 2 × 3');
    const third = charger.begin({ wallet }, ORIGIN);
    assert.equal(third.claimRunAhead(2), true, '4 left covers 2 × 2');
    await third.release(); // its work ended before its hold: the claim no longer counts
    await second.cover(4);
    assert.equal(second.claimRunAhead(1), false, 'a hold is already taken');
    await second.release();
    assert.equal(second.claimRunAhead(1), false, 'a closed charge runs nothing');
    // Spent elsewhere (another request, another instance): the refused hold teaches the real balance.
    await gw.ledger.settle(await gw.ledger.reserve(wallet, 7), 7);
    await assert.rejects(charger.begin({ wallet }, ORIGIN).cover(3), { code: 'insufficient_credits' });
    assert.equal(charger.begin({ wallet }, ORIGIN).claimRunAhead(1), false, '1 seen does not cover 2 × 1');
    await gw.ledger.grant(wallet, 9);
    const settled = charger.begin({ wallet }, ORIGIN);
    await settled.cover(1);
    await settled.settle(0);
    assert.equal(charger.begin({ wallet }, ORIGIN).claimRunAhead(5), true, 'a settle teaches it too: 10 left');
    assert.equal(ledgerCharger(gw.ledger).begin({ wallet }, ORIGIN).claimRunAhead(1), false, 'each charger keeps its own');
    assert.equal(NO_CHARGE.begin({ wallet }, ORIGIN).claimRunAhead(1), false, 'a free cover answers at once');
  });

  test('a charge claimed at the end holds nothing and is charged in one step; short, it takes what is left; empty, it is refused', async () => {
    const wallet = '0x' + 'a'.repeat(40);
    await gw.ledger.grant(wallet, 20);
    // Every ledger call the charges make, by name.
    const calls: string[] = [];
    const counted = new Proxy(gw.ledger, {
      get: (target, name, receiver) => {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => (calls.push(String(name)), (value as (...a: unknown[]) => unknown).apply(target, args));
      },
    });
    const charger = ledgerCharger(counted);
    /** A charge that holds 1 and settles 0: the ledger reports the balance to the charger. */
    const teach = async () => {
      const charge = charger.begin({ wallet }, ORIGIN);
      await charge.cover(1);
      await charge.settle(0);
    };
    const seeing = charger.begin({ wallet }, ORIGIN);
    assert.equal(seeing.claimChargeAtEnd(1), false, 'no balance seen yet');
    await seeing.cover(1);
    await seeing.settle(1);
    calls.length = 0;
    const atEnd = charger.begin({ wallet }, ORIGIN);
    assert.equal(atEnd.claimChargeAtEnd(4), true, '19 seen covers 2 × 4');
    assert.equal(atEnd.claimChargeAtEnd(1), false, 'claimed once');
    assert.equal(atEnd.claimRunAhead(1), false, 'nothing runs ahead of a hold it will not take');
    assert.deepEqual(calls, [], 'nothing held while the work runs');
    assert.deepEqual(await atEnd.settle(3), { charged: 3, remaining: 16 });
    assert.deepEqual(await atEnd.settle(9), { charged: 3, remaining: 16 }, 'only the first settle charges');
    assert.deepEqual(calls, ['charge'], 'one ledger step');

    // Spent elsewhere meanwhile (another request, another instance) down to 1: it takes what is left.
    const partly = charger.begin({ wallet }, ORIGIN);
    assert.equal(partly.claimChargeAtEnd(4), true, '16 seen covers 2 × 4');
    await gw.ledger.charge(wallet, 15);
    assert.deepEqual(await partly.settle(3), { charged: 1, remaining: 0 });
    assert.deepEqual(await gw.ledger.balance(wallet), { address: wallet, credits: 0, total_deposited: 20, total_spent: 20 });

    // Emptied meanwhile: refused, nothing charged, and the refusal teaches the balance.
    await gw.ledger.grant(wallet, 20);
    await teach();
    const refused = charger.begin({ wallet }, ORIGIN);
    assert.equal(refused.claimChargeAtEnd(4), true, '20 seen covers 2 × 4');
    await gw.ledger.charge(wallet, 20);
    await assert.rejects(refused.settle(3), { code: 'insufficient_credits' });
    assert.equal(await refused.settle(3), undefined, 'a refused charge is over');
    await refused.release();
    assert.equal(charger.begin({ wallet }, ORIGIN).claimChargeAtEnd(1), false, '0 seen');
    assert.deepEqual(await gw.ledger.balance(wallet), { address: wallet, credits: 0, total_deposited: 40, total_spent: 40 });

    // More work after a claim: the first cover holds, and a wallet too short for it answers false, not 402.
    await gw.ledger.grant(wallet, 20);
    await teach();
    const longer = charger.begin({ wallet }, ORIGIN);
    assert.equal(longer.claimChargeAtEnd(5), true, '20 seen covers 2 × 5');
    assert.equal(await longer.cover(21), false, 'work already ran: the wallet is short, the work stops');
    assert.equal(await longer.cover(6), true);
    assert.deepEqual(await longer.settle(4), { charged: 4, remaining: 16 });
    assert.equal(NO_CHARGE.begin({ wallet }, ORIGIN).claimChargeAtEnd(1), false, 'a free settle is no step');
  });

  test('open claims and holds taken count against the balance last seen, until the ledger answers them', async () => {
    const wallet = '0x' + 'b'.repeat(40);
    await gw.ledger.grant(wallet, 31);
    const charger = ledgerCharger(gw.ledger);
    const teach = charger.begin({ wallet }, ORIGIN);
    await teach.cover(1);
    await teach.settle(1); // 30 seen
    const first = charger.begin({ wallet }, ORIGIN);
    const second = charger.begin({ wallet }, ORIGIN);
    assert.equal(first.claimChargeAtEnd(10), true, '30 covers 2 × 10');
    assert.equal(second.claimChargeAtEnd(10), true, '30 less 10 claimed covers 2 × 10');
    assert.equal(charger.begin({ wallet }, ORIGIN).claimChargeAtEnd(10), false, '30 less 20 claimed does not');
    // Another request's settle reports the ledger's balance (30: the claims have not been charged yet); they still count.
    const other = charger.begin({ wallet }, ORIGIN);
    await other.cover(1);
    assert.equal(
      charger.begin({ wallet }, ORIGIN).claimChargeAtEnd(5),
      false,
      '29 less 20 claimed does not cover 2 × 5: the hold taken counts',
    );
    await other.settle(0);
    assert.equal(charger.begin({ wallet }, ORIGIN).claimChargeAtEnd(6), false, '30 less 20 claimed does not cover 2 × 6');
    await first.settle(1);
    await second.release(); // its work failed: the claim ends with nothing charged
    const third = charger.begin({ wallet }, ORIGIN);
    assert.equal(third.claimChargeAtEnd(14), true, '29 reported, nothing claimed, covers 2 × 14');
    await third.release();
    assert.deepEqual(await gw.ledger.balance(wallet), { address: wallet, credits: 29, total_deposited: 31, total_spent: 2 });
  });

  test('free mode (NO_CHARGE): the ledger is never touched', async () => {
    const charge = NO_CHARGE.begin({ wallet: alice }, ORIGIN);
    assert.equal(await charge.cover(100), true);
    assert.equal(await charge.settle(7), undefined);
    await charge.release();
    assert.equal(await withCharge(NO_CHARGE, { wallet: alice }, ORIGIN, 1, async () => ({ result: 42, cost: 1 })), 42);
    assert.deepEqual(await gw.ledger.balance(alice), { address: alice, credits: 0, total_deposited: 0, total_spent: 0 });
  });
});

test('free mode: GET /credits/balance with the wallet header alone', async () => {
  const gw = await startAccountsGateway({ freeMode: true });
  try {
    await gw.ledger.grant(alice, 3);
    assert.deepEqual((await call(`${gw.url}/credits/balance`, { headers: walletHeaders(alice) })).body, {
      address: alice,
      credits: 3,
      total_deposited: 3,
      total_spent: 0,
    });
  } finally {
    await gw.stop();
  }
});
