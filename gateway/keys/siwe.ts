/**
 * Wallet-ownership proof with Sign-In with Ethereum (EIP-4361). The gateway issues single-use
 * nonces bound to the asking wallet; a proof is a SIWE message for this gateway's domain and
 * origin, with that nonce and an expiry at most 15 minutes out, signed by the wallet. Each
 * refusal has its own 401 code so a client can tell what to fix.
 *
 * @example
 *   const siwe = new SiweVerifier({ publicUrl: 'https://api.example', nonces: new NonceStore({ ttlMs: 600_000 }) })
 *   const { nonce } = await siwe.issueNonce(wallet)
 *   await siwe.verify(wallet, { message, signature })   // throws Unauthorized('siwe_…') on refusal
 */
import { isHex, verifyMessage, type Hex } from 'viem';
import { parseSiweMessage, validateSiweMessage } from 'viem/siwe';
import type { ChainClient, ReadPolicy } from '../../chains/chain-client.js';
import { echoed, GatewayError, Unauthorized } from '../errors.js';

/** A proof may be valid for at most this long from now. */
export const MAX_PROOF_LIFETIME_MS = 15 * 60_000;
/** Clocks disagree a little; a proof this far beyond the limit is still accepted. */
const CLOCK_SKEW_MS = 30_000;
/** An EOA signature is r ‖ s ‖ v: 65 bytes. Anything else is a contract-account signature. */
const EOA_SIGNATURE_HEX_LENGTH = 2 + 65 * 2;

/** SIWE's policy for its chain (SIWE_RPC_URL): five seconds and no retries: a client waits on the check. */
export const SIWE_READ_POLICY: ReadPolicy = { timeoutMs: 5_000, retries: 0 };

export interface SiweOptions {
  /** PUBLIC_URL: its host is the SIWE `domain`, its origin the `uri`. */
  publicUrl: string;
  /** When set, EIP-1271/6492 signatures are checked on this chain (SIWE_RPC_URL, on SIWE_READ_POLICY). */
  chain?: ChainClient;
  /** Where outstanding nonces live: this process's memory (NonceStore), or Redis shared by every instance. */
  nonces: Nonces;
}

/** Outstanding single-use nonces: NonceStore in memory, or shared by every instance (Redis). */
export interface Nonces {
  issue(wallet: string): { nonce: string; expiresAt: number } | Promise<{ nonce: string; expiresAt: number }>;
  /** True exactly once for a nonce issued to `wallet` and not expired; atomic across callers. */
  consume(nonce: string, wallet: string): boolean | Promise<boolean>;
}

export interface NonceGrant {
  nonce: string;
  domain: string;
  uri: string;
  /** ISO-8601. */
  expires_at: string;
}

const refuse = (code: string, message: string) => new Unauthorized(code, message);

export class SiweVerifier {
  readonly domain: string;
  readonly origin: string;
  private readonly nonces: Nonces;

  constructor(private readonly options: SiweOptions) {
    const url = new URL(options.publicUrl);
    this.domain = url.host;
    this.origin = url.origin;
    this.nonces = options.nonces;
  }

  /**
   * A fresh single-use nonce for `wallet`, valid for the nonce store's TTL. Kept in memory (see
   * NonceStore) or, in cluster mode, in Redis: a wallet has at most a few outstanding.
   */
  async issueNonce(wallet: string): Promise<NonceGrant> {
    const { nonce, expiresAt } = await this.nonces.issue(wallet.toLowerCase());
    return { nonce, domain: this.domain, uri: this.origin, expires_at: new Date(expiresAt).toISOString() };
  }

  /**
   * Check a proof that `wallet` signed `message`, consuming its nonce. Every check runs before
   * the nonce is spent, so a proof refused for a fixable reason does not burn it; of many
   * concurrent submissions of one valid proof exactly one passes.
   */
  async verify(wallet: string, proof: { message: string; signature: string }): Promise<void> {
    const address = wallet.toLowerCase();
    const fields = parseSiweMessage(proof.message);
    if (!fields.domain || !fields.address || !fields.uri || !fields.nonce || fields.version !== '1' || fields.chainId === undefined) {
      throw refuse('siwe_invalid_message', 'message is not a valid EIP-4361 (SIWE) message.');
    }
    if (fields.domain !== this.domain) {
      throw refuse('siwe_domain_mismatch', `SIWE domain must be "${this.domain}", got "${echoed(fields.domain)}".`);
    }
    if (originOf(fields.uri) !== this.origin) {
      throw refuse('siwe_uri_mismatch', `SIWE uri must be "${this.origin}", got "${echoed(fields.uri)}".`);
    }
    if (fields.address.toLowerCase() !== address) {
      throw refuse('siwe_address_mismatch', 'The SIWE message is signed for another address than x-wallet-address.');
    }
    const now = new Date();
    const expiration = fields.expirationTime;
    if (!expiration || Number.isNaN(expiration.getTime())) {
      throw refuse('siwe_expiration_required', 'The SIWE message must carry an Expiration Time (at most 15 minutes out).');
    }
    if (expiration <= now) throw refuse('siwe_expired', 'The SIWE message has expired.');
    if (expiration.getTime() - now.getTime() > MAX_PROOF_LIFETIME_MS + CLOCK_SKEW_MS) {
      throw refuse('siwe_expiration_too_far', 'The SIWE Expiration Time may be at most 15 minutes from now.');
    }
    if (fields.notBefore && fields.notBefore > now) throw refuse('siwe_not_yet_valid', 'The SIWE message is not valid yet (Not Before).');
    // viem's own check of the same rules, as a second guard (it also rejects malformed dates).
    if (!validateSiweMessage({ message: fields, domain: this.domain, address: fields.address, time: now })) {
      throw refuse('siwe_invalid_message', 'message is not a valid EIP-4361 (SIWE) message.');
    }
    await this.checkSignature(fields.address, proof.message, proof.signature);
    if (!(await this.nonces.consume(fields.nonce, address))) {
      throw refuse('siwe_nonce_invalid', 'The SIWE nonce is unknown, expired or already used; get a new one from GET /auth/nonce.');
    }
  }

  private async checkSignature(address: Hex, message: string, signature: string): Promise<void> {
    if (!isHex(signature, { strict: true }) || signature.length < 4) {
      throw refuse('siwe_invalid_signature', 'signature must be a 0x-prefixed hex string.');
    }
    if (signature.length === EOA_SIGNATURE_HEX_LENGTH && (await verifyEoa(address, message, signature))) return;
    if (!this.options.chain) {
      if (signature.length === EOA_SIGNATURE_HEX_LENGTH) {
        throw refuse('siwe_invalid_signature', 'The signature does not match the address in the SIWE message.');
      }
      // Only a signature that could be a smart account's is "unsupported": one wrapped for
      // ERC-6492, or longer than an EOA's. Shorter ones or half bytes are simply not signatures.
      if (!couldBeContractSignature(signature)) {
        throw refuse('siwe_invalid_signature', 'signature must be 65 bytes (an EOA signature) or a smart-account signature.');
      }
      throw refuse('unsupported_signature', 'Smart-account (EIP-1271/6492) signatures need SIWE_RPC_URL on the gateway.');
    }
    // viem reports a failed eth_call as "invalid signature"; counting HTTP answers tells a
    // chain that said no from a chain that did not answer (a client per check keeps counts apart).
    let asked = 0;
    let answered = 0;
    const client = this.options.chain.observed({
      onFetchRequest: () => void asked++,
      onFetchResponse: (response) => void (response.ok && answered++),
    });
    let valid = false;
    let failure: unknown;
    try {
      valid = await client.verifyMessage({ address, message, signature });
    } catch (err) {
      failure = err;
    }
    if (failure !== undefined || (!valid && answered < asked)) {
      throw new GatewayError({
        status: 502,
        code: 'siwe_rpc_unavailable',
        message: 'The chain RPC that checks smart-account signatures did not answer.',
        details: failure instanceof Error ? failure.message : `${asked - answered} of ${asked} RPC requests failed`,
        cause: failure,
      });
    }
    if (!valid) throw refuse('siwe_invalid_signature', 'The signature does not match the address in the SIWE message.');
  }
}

/** ERC-6492 wrapped signatures end with this magic suffix. */
const ERC6492_SUFFIX = '6492'.repeat(16);

function couldBeContractSignature(signature: Hex): boolean {
  if (signature.length % 2 !== 0) return false; // an odd number of hex digits is no byte string
  return signature.toLowerCase().endsWith(ERC6492_SUFFIX) || signature.length > EOA_SIGNATURE_HEX_LENGTH;
}

async function verifyEoa(address: Hex, message: string, signature: Hex): Promise<boolean> {
  try {
    return await verifyMessage({ address, message, signature });
  } catch {
    return false; // malformed r/s/v: not a signature of anyone
  }
}

function originOf(uri: string): string | undefined {
  try {
    return new URL(uri).origin;
  } catch {
    return undefined;
  }
}
