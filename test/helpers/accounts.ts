/**
 * Shared by the accounts tests: a gateway with credits on (free mode off, admin token, a fixed
 * PUBLIC_URL for SIWE), a viem local account that signs SIWE messages, and small fetch helpers;
 * for tests that open a DATA_DIR's accounts directly, the opener, a writer of the Keyv rows older
 * versions kept in the ledger's file, and a reader of either SQLite file.
 */
import { join } from 'node:path';
import KeyvSqlite from '@keyv/sqlite';
import { openDataDirStores as openAccounts, type DataDirStores as Accounts } from '../../gateway/stores/embedded-stores.js';
import { STORE_FILE } from '../../gateway/storage/sqlite/keyv-store.js';
import { openSqlite } from '../../gateway/storage/sqlite/sqlite-connection.js';
import { createSiweMessage, type SiweMessage } from 'viem/siwe';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startTestGateway, walletHeaders, type TestGateway } from './gateway.js';

export const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';
export const PUBLIC_URL = 'https://switchyard.test';
export const DOMAIN = 'switchyard.test';

/** Two well-known development keys (hardhat accounts 0 and 1): never hold real value. */
export const ALICE: PrivateKeyAccount = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
export const BOB: PrivateKeyAccount = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945bc28fdc8b4ffba55e6575c65a3fb3f41eb1');

export function startAccountsGateway(
  options: {
    freeMode?: boolean;
    dataDir?: string;
    accounts?: Record<string, unknown>;
    adminToken?: string | null;
    env?: Record<string, string>;
    /** Last changes to the config file (e.g. deadlines under a short reservation TTL). */
    config?: (json: Record<string, unknown>) => void;
  } = {},
): Promise<TestGateway> {
  return startTestGateway({
    dataDir: options.dataDir,
    env: options.env,
    config: (json) => {
      json.freeMode = options.freeMode ?? false;
      if (options.adminToken !== null) json.adminToken = options.adminToken ?? ADMIN_TOKEN;
      (json.server as Record<string, unknown>).publicUrl = PUBLIC_URL;
      if (options.accounts) json.accounts = options.accounts;
      options.config?.(json);
    },
  });
}

export interface Answer {
  status: number;
  // Test bodies are checked field by field against literals; a loose type keeps that readable.
  body: any;
  headers: Headers;
}

/** fetch + JSON body. */
export async function call(url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<Answer> {
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers: init.headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

/** Assert-friendly view of an error answer. */
export function errorOf(answer: Answer): { status: number; code: string; type: string } {
  return { status: answer.status, code: answer.body?.error?.code, type: answer.body?.error?.type };
}

/** Ask the gateway for a nonce and sign a SIWE message with it; `fields` override the defaults. */
export async function signedProof(
  gateway: Pick<TestGateway, 'url'>,
  account: PrivateKeyAccount,
  fields: Partial<SiweMessage> = {},
): Promise<{ message: string; signature: string; nonce: string }> {
  const answer = await call(`${gateway.url}/auth/nonce`, { headers: walletHeaders(account.address) });
  if (answer.status !== 200) throw new Error(`nonce: ${answer.status}`);
  const message = createSiweMessage({
    address: account.address,
    chainId: 1,
    domain: answer.body.domain,
    uri: answer.body.uri,
    nonce: answer.body.nonce,
    version: '1',
    statement: 'Create a Switchyard API key.',
    issuedAt: new Date(),
    expirationTime: new Date(Date.now() + 10 * 60_000),
    ...fields,
  });
  const signature = await account.signMessage({ message });
  return { message, signature, nonce: answer.body.nonce };
}

/** POST /auth/api-keys for `account` with a fresh proof; returns the key. */
export async function mintVerifiedKey(gateway: Pick<TestGateway, 'url'>, account: PrivateKeyAccount, name = 'test'): Promise<string> {
  const proof = await signedProof(gateway, account);
  const answer = await call(`${gateway.url}/auth/api-keys`, {
    method: 'POST',
    headers: walletHeaders(account.address),
    body: { name, message: proof.message, signature: proof.signature },
  });
  if (answer.status !== 200) throw new Error(`mint: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.key as string;
}

/** Stored-response settings for tests that open accounts directly (the config defaults). */
export const TEST_RESPONSE_SETTINGS = { maxPerWallet: 100, maxBytesPerWallet: 16 * 1024 * 1024, sweepIntervalMs: 60_000 };

/** A DATA_DIR's embedded accounts, as the gateway opens them. */
export function openTestAccounts(dataDir: string): Promise<Accounts> {
  return openAccounts({
    dataDir,
    publicUrl: 'http://127.0.0.1:8080',
    settings: { reservationTtlMs: 60_000, nonceTtlMs: 60_000 },
    responses: TEST_RESPONSE_SETTINGS,
  });
}

/** Rows exactly as older versions wrote them: Keyv's table in the ledger's file, Keyv's JSON envelope and key prefixes. */
export async function writeKeyvEraRows(dataDir: string, rows: Array<[string, unknown]>): Promise<void> {
  const adapter = new KeyvSqlite({ uri: `sqlite://${join(dataDir, STORE_FILE)}` });
  for (const [key, value] of rows) await adapter.query('INSERT INTO keyv (key, value) VALUES (?, ?)', key, JSON.stringify(value));
  await adapter.disconnect();
}

/** The rows of one query on a SQLite file no gateway has open. */
export async function sqliteRows<Row>(file: string, sql: string): Promise<Row[]> {
  const db = await openSqlite(file);
  try {
    return await db.all<Row>(sql);
  } finally {
    await db.close();
  }
}
