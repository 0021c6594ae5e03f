/**
 * The API key records' contract: what a key store keeps (never the key, only its SHA-256 hex and
 * what describes it), the stored shape every store checks on the way back in, and the per-wallet cap.
 * Implemented over Keyv (keyv-key-store.ts, embedded) and PostgreSQL (postgres-key-store.ts, cluster);
 * `ApiKeys` (api-keys.ts) adds minting, the in-process cache and last-use throttling on top.
 */
import { z } from 'zod';

/**
 * Active keys one wallet may hold. In free mode anyone can mint for any wallet: without a cap one
 * wallet's keys could grow without end.
 */
export const MAX_KEYS_PER_WALLET = 100;

/** One API key as stored: never the key itself, only what identifies and describes it. */
export interface ApiKeyRecord {
  id: string;
  name: string;
  /** The owning wallet, lower case. */
  address: string;
  /** Unix seconds. */
  created_at: number;
  last_used_at: number | null;
  /** Minted with a wallet-ownership proof (false: free mode, no proof). */
  verified: boolean;
  /** The first characters of the key: enough to recognise it, useless to an attacker. */
  prefix: string;
}

/** Where API key records live, by the key's SHA-256 hex. */
export interface KeyStore {
  /** Store a new key; TooManyApiKeys when the wallet already holds MAX_KEYS_PER_WALLET keys. */
  insert(hash: string, record: ApiKeyRecord): Promise<void>;
  /** The record of a key hash; undefined when unknown or revoked. */
  get(hash: string): Promise<ApiKeyRecord | undefined>;
  /** The wallet's keys, oldest first, with their hashes. */
  list(address: string): Promise<Array<{ hash: string; record: ApiKeyRecord }>>;
  /** Revoke the wallet's key `id` (it stops working at once); its hash, or undefined when the wallet has no such key. */
  remove(address: string, id: string): Promise<string | undefined>;
  /** Set last_used_at (unix seconds) of a key that still exists; a revoked key stays revoked. */
  touch(hash: string, lastUsedAt: number): Promise<void>;
}

/** The stored shape of an API key record, checked wherever a key store reads one back. */
export const apiKeyRecordSchema = z.object({
  id: z.string(),
  name: z.string(),
  address: z.string(),
  created_at: z.number().int(),
  last_used_at: z.number().int().nullable(),
  verified: z.boolean(),
  prefix: z.string(),
}) satisfies z.ZodType<ApiKeyRecord>;
