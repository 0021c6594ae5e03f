/**
 * Outstanding SIWE nonces, in memory. A nonce lives minutes and is asked for with nothing but a
 * wallet header, so keeping it in the store would grow the SQLite file by every request (Keyv
 * never deletes an expired row it is not asked for). One process owns DATA_DIR, so memory is
 * enough; a restart invalidates outstanding nonces and the client simply asks for a new one.
 *
 * Bounded: each wallet holds at most `perWallet` nonces and the whole map `total`; the oldest goes
 * first. Every nonce lives the same TTL, so insertion order is expiry order and expired nonces are
 * dropped from the front as new ones are issued.
 *
 * @example
 *   const nonces = new NonceStore({ ttlMs: 600_000 })
 *   const { nonce } = nonces.issue(wallet)
 *   nonces.consume(nonce, wallet)   // true once, then false
 */
import { generateSiweNonce } from 'viem/siwe';

/** Nonces one wallet may have outstanding: enough for a few tabs or retries, no more. */
export const NONCES_PER_WALLET = 5;
/** Nonces outstanding in all: bounds memory when many wallets ask at once (~100 bytes each). */
export const NONCES_TOTAL = 100_000;

interface Outstanding {
  wallet: string;
  expiresAt: number;
}

export class NonceStore {
  private readonly byNonce = new Map<string, Outstanding>();
  /** Each wallet's outstanding nonces, oldest first. */
  private readonly byWallet = new Map<string, string[]>();
  private readonly ttlMs: number;
  private readonly perWallet: number;
  private readonly total: number;
  private readonly now: () => number;

  constructor(options: { ttlMs: number; perWallet?: number; total?: number; now?: () => number }) {
    this.ttlMs = options.ttlMs;
    this.perWallet = options.perWallet ?? NONCES_PER_WALLET;
    this.total = options.total ?? NONCES_TOTAL;
    this.now = options.now ?? Date.now;
  }

  /** How many nonces are outstanding (expired ones not yet dropped included). */
  get size(): number {
    return this.byNonce.size;
  }

  /** A fresh nonce for `wallet` (lower-case), valid for the TTL. */
  issue(wallet: string): { nonce: string; expiresAt: number } {
    const now = this.now();
    this.dropExpired(now);
    const mine = this.byWallet.get(wallet);
    while (mine && mine.length >= this.perWallet) this.forget(mine[0]);
    if (this.byNonce.size >= this.total) this.forget(this.byNonce.keys().next().value!);
    const nonce = generateSiweNonce();
    const expiresAt = now + this.ttlMs;
    this.byNonce.set(nonce, { wallet, expiresAt });
    const list = this.byWallet.get(wallet);
    if (list) list.push(nonce);
    else this.byWallet.set(wallet, [nonce]);
    return { nonce, expiresAt };
  }

  /**
   * Spend `nonce` for `wallet`: true when it was outstanding, unexpired and issued to that wallet.
   * Synchronous, so of concurrent callers exactly one sees it.
   */
  consume(nonce: string, wallet: string): boolean {
    const entry = this.byNonce.get(nonce);
    if (!entry || entry.wallet !== wallet) return false;
    this.forget(nonce);
    return entry.expiresAt > this.now();
  }

  private dropExpired(now: number): void {
    for (const [nonce, entry] of this.byNonce) {
      if (entry.expiresAt > now) return;
      this.forget(nonce);
    }
  }

  private forget(nonce: string): void {
    const entry = this.byNonce.get(nonce);
    if (!entry) return;
    this.byNonce.delete(nonce);
    const list = this.byWallet.get(entry.wallet);
    if (!list) return;
    list.splice(list.indexOf(nonce), 1);
    if (list.length === 0) this.byWallet.delete(entry.wallet);
  }
}
