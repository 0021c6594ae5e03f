/**
 * `npm run credits -- grant <address> <amount>`, `npm run credits -- balance <address>` and
 * `npm run credits -- usage <address> [--group-by day|model|key] [--kind K] [--key-id ID]
 * [--from ISO] [--to ISO] [--limit N] [--cursor C]` (the wallet's usage records, as
 * GET /admin/credits/:address/usage answers them); in cluster mode also
 * `npm run credits -- migrate-to-postgres` (see migrate-to-postgres.ts).
 *
 * In cluster mode (DATABASE_URL) the CLI writes PostgreSQL itself: every ledger step is atomic
 * there, so it is one more writer among the gateways, with no lock to take.
 *
 * When a gateway owns DATA_DIR (its lock names a live pid), the CLI goes through that gateway's
 * admin API (ADMIN_TOKEN, HOST, PORT from the environment or config), so the gateway stays the
 * only writer and no grant can be lost. When no process holds the lock, the CLI takes it and
 * writes the store itself. Either way it prints the same JSON: the balance, plus `granted` for a
 * grant; for usage, the page of records or the totals. Exits 1 with a message on failure.
 *
 * A grant carries one Idempotency-Key for the whole run: every retry (a lost response, a gateway
 * that answers only on the second try, a switch to direct mode) names the same grant, so it is
 * applied at most once.
 *
 * @example
 *   ADMIN_TOKEN=… npm run credits -- grant 0x52908400098527886E0F7030069857D2E4169EE7 100
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { GatewayError } from '../errors.js';
import { parseWalletAddress } from '../wallet-address.js';
import { DataDirLocked, lockHolder } from '../storage/data-dir-lock.js';
import { isClusterConfig, type ClusterConfig, type CliStores } from '../stores/stores.js';
import { openEmbeddedCliStores } from '../stores/embedded-stores.js';
import { openClusterCliStores } from '../stores/cluster-stores.js';
import type { Balance } from '../ledger/ledger.js';
import { MAX_GRANT } from '../ledger/ledger-amounts.js';
import { migrateToPostgres, type MigrationReport } from './migrate-to-postgres.js';
import { usageAnswer, type UsageAnswer } from '../ledger/usage-query.js';

const USAGE =
  'usage: npm run credits -- grant <address> <amount>\n       npm run credits -- balance <address>\n' +
  '       npm run credits -- usage <address> [--group-by day|model|key] [--kind K] [--key-id ID] [--from ISO] [--to ISO] [--limit N] [--cursor C]\n' +
  '       npm run credits -- migrate-to-postgres   (DATA_DIR → DATABASE_URL)';
/** Another CLI run may hold the lock for a moment; wait this long for it. */
const LOCK_WAIT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 10_000;

/** A failure whose message is already what the user should read. */
export class CliError extends Error {}
/** The lock names a live process but nothing answers HTTP: perhaps another CLI run. */
class GatewayUnreachable extends CliError {}

type Command =
  | { kind: 'grant'; wallet: string; amount: number; idempotencyKey: string }
  | { kind: 'balance'; wallet: string }
  | { kind: 'usage'; wallet: string; query: Record<string, string> }
  | { kind: 'migrate-to-postgres' };

const count = z.number().int().nonnegative();
/** The admin API's usage answer, checked as far as the CLI relies on it. */
const usageAnswerSchema = z.object({ object: z.enum(['list', 'usage_totals']), data: z.array(z.unknown()) });
/** What the CLI prints, in both modes; the admin API's answer is checked against it. */
const outputSchema = z.object({
  address: z.string(),
  credits: count,
  total_deposited: count,
  total_spent: count,
  granted: count.optional(),
});
export type CliOutput = z.infer<typeof outputSchema> | UsageAnswer;

/** The usage command's flags: each is the query parameter of GET /admin/credits/:address/usage. */
const USAGE_FLAGS: Record<string, string> = {
  '--group-by': 'group_by',
  '--kind': 'kind',
  '--key-id': 'key_id',
  '--from': 'from',
  '--to': 'to',
  '--limit': 'limit',
  '--cursor': 'cursor',
};

function walletArg(address: string | undefined): string {
  const wallet = parseWalletAddress(address);
  if (!wallet)
    throw new CliError(`credits: "${address ?? ''}" is not a wallet address (0x + 40 hex, valid EIP-55 checksum if mixed case).`);
  return wallet;
}

function parseUsageArgs(args: string[]): Command {
  const [address, ...flags] = args;
  const query: Record<string, string> = {};
  for (let i = 0; i < flags.length; i += 2) {
    const name = USAGE_FLAGS[flags[i]];
    const value = flags[i + 1];
    if (!name || value === undefined) throw new CliError(USAGE);
    query[name] = value;
  }
  return { kind: 'usage', wallet: walletArg(address), query };
}

function parseArgs(argv: string[]): Command {
  const [kind, address, amountText, ...rest] = argv;
  if (kind === 'migrate-to-postgres' && argv.length === 1) return { kind };
  if (kind === 'usage') return parseUsageArgs(argv.slice(1));
  if ((kind !== 'grant' && kind !== 'balance') || rest.length > 0) throw new CliError(USAGE);
  const wallet = walletArg(address);
  if (kind === 'balance') {
    if (amountText !== undefined) throw new CliError(USAGE);
    return { kind, wallet };
  }
  if (amountText === undefined || !/^\d+$/.test(amountText) || Number(amountText) < 1 || Number(amountText) > MAX_GRANT) {
    throw new CliError(`credits: amount must be a whole number from 1 to ${MAX_GRANT}, got "${amountText ?? ''}".`);
  }
  return { kind, wallet, amount: Number(amountText), idempotencyKey: `cli-${randomUUID()}` };
}

function gatewayUrl(config: Config): string {
  // A gateway listening on every interface is reachable on loopback.
  const host = ['0.0.0.0', '::', '[::]'].includes(config.server.host) ? '127.0.0.1' : config.server.host;
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${config.server.port}`;
}

type LedgerCommand = Exclude<Command, { kind: 'migrate-to-postgres' }>;

async function viaAdminApi(config: Config, command: LedgerCommand, pid: number): Promise<CliOutput> {
  const base = gatewayUrl(config);
  if (!config.adminToken) {
    // Only a gateway answers HTTP there; a holder that does not is likely another CLI run (retried).
    const answers = await fetch(`${base}/health`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }).then(
      () => true,
      () => false,
    );
    if (!answers) throw new GatewayUnreachable(`credits: pid ${pid} owns ${config.dataDir} and no gateway answers at ${base}.`);
    throw new CliError(`credits: a gateway (pid ${pid}) owns ${config.dataDir}; set ADMIN_TOKEN so the CLI can use its admin API.`);
  }
  const headers: Record<string, string> = { authorization: `Bearer ${config.adminToken}`, 'content-type': 'application/json' };
  const request =
    command.kind === 'grant'
      ? {
          url: `${base}/admin/credits/grant`,
          init: {
            method: 'POST',
            headers: { ...headers, 'idempotency-key': command.idempotencyKey },
            body: JSON.stringify({ address: command.wallet, amount: command.amount }),
          },
        }
      : command.kind === 'usage'
        ? { url: `${base}/admin/credits/${command.wallet}/usage?${new URLSearchParams(command.query)}`, init: { method: 'GET', headers } }
        : { url: `${base}/admin/credits/${command.wallet}`, init: { method: 'GET', headers } };
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    let res: Response;
    try {
      res = await fetch(request.url, { ...request.init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    } catch (err) {
      lastError = err;
      continue;
    }
    const body: unknown = await res.json().catch(() => undefined);
    if (!res.ok) {
      const message = z.object({ error: z.object({ message: z.string() }) }).safeParse(body);
      throw new CliError(`credits: the gateway answered ${res.status}: ${message.success ? message.data.error.message : 'no message'}`);
    }
    if (command.kind === 'usage') {
      const usage = usageAnswerSchema.safeParse(body);
      if (!usage.success) throw new CliError(`credits: the gateway's answer is not a usage answer: ${usage.error.issues[0].message}`);
      return body as UsageAnswer;
    }
    const output = outputSchema.safeParse(body);
    if (!output.success) throw new CliError(`credits: the gateway's answer is not a balance: ${output.error.issues[0].message}`);
    const { address, credits, total_deposited, total_spent, granted } = output.data;
    return { address, credits, total_deposited, total_spent, ...(command.kind === 'grant' ? { granted } : {}) };
  }
  const reason = lastError instanceof Error ? ((lastError.cause as Error | undefined)?.message ?? lastError.message) : String(lastError);
  throw new GatewayUnreachable(`credits: pid ${pid} owns ${config.dataDir} but no gateway answers at ${base} (${reason}).`);
}

/** Run `command` on the ledger of `stores`, then close them. */
async function onLedger(stores: CliStores, command: LedgerCommand): Promise<CliOutput> {
  try {
    if (command.kind === 'balance') return await stores.ledger.balance(command.wallet);
    if (command.kind === 'usage') return await usageOf(stores, command);
    const balance: Balance = await stores.ledger.grant(command.wallet, command.amount, command.idempotencyKey);
    return { ...balance, granted: command.amount };
  } finally {
    await stores.close();
  }
}

/** The usage answer from the stores themselves; a bad flag value is the same 400 message the admin API gives. */
async function usageOf(stores: CliStores, command: Extract<Command, { kind: 'usage' }>): Promise<UsageAnswer> {
  try {
    return await usageAnswer(stores.usage, command.wallet, command.query);
  } catch (err) {
    if (err instanceof GatewayError && err.status === 400) throw new CliError(`credits: ${err.message}`);
    throw err;
  }
}

/** Cluster mode: the ledger in PostgreSQL, written directly (migrated first, as a gateway would). */
async function onPostgres(config: ClusterConfig, command: LedgerCommand): Promise<CliOutput> {
  return onLedger(await openClusterCliStores(config), command);
}

/** Embedded mode with no gateway running: the DATA_DIR's ledger, under its lock. */
async function direct(config: Config, command: LedgerCommand): Promise<CliOutput> {
  return onLedger(await openEmbeddedCliStores(config), command);
}

export async function runCreditsCli(argv: string[], env: Record<string, string | undefined>): Promise<CliOutput | MigrationReport> {
  const command = parseArgs(argv);
  const config = loadConfig(env);
  if (command.kind === 'migrate-to-postgres') {
    if (!isClusterConfig(config)) {
      throw new CliError('credits: migrate-to-postgres needs DATABASE_URL (the PostgreSQL to copy DATA_DIR into).');
    }
    return migrateToPostgres(config, config.cluster.databaseUrl);
  }
  if (isClusterConfig(config)) return onPostgres(config, command);
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    const pid = lockHolder(config.dataDir);
    if (pid === undefined) {
      try {
        return await direct(config, command);
      } catch (err) {
        if (!(err instanceof DataDirLocked)) throw err;
        continue; // a gateway started in between: go through it
      }
    }
    try {
      return await viaAdminApi(config, command, pid);
    } catch (err) {
      // The holder may be another CLI run, which lets go in a moment.
      if (!(err instanceof GatewayUnreachable) || Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
