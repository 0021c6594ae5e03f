/**
 * `npm run credits -- grant <address> <amount>` and `npm run credits -- balance <address>`.
 *
 * When a gateway owns DATA_DIR (its lock names a live pid), the CLI goes through that gateway's
 * admin API (ADMIN_TOKEN, HOST, PORT from the environment or config), so the gateway stays the
 * only writer and no grant can be lost. When no process holds the lock, the CLI takes it and
 * writes the store itself. Prints the balance as JSON; exits 1 with a message on failure.
 *
 * @example
 *   ADMIN_TOKEN=… npm run credits -- grant 0x52908400098527886E0F7030069857D2E4169EE7 100
 */
import { randomUUID } from 'node:crypto';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { parseWalletAddress } from '../http/wallet.js';
import { DataDirLocked, lockHolder } from '../accounts/data-dir-lock.js';
import { openAccounts } from '../accounts/accounts.js';
import type { Balance } from '../accounts/types.js';
import { MAX_GRANT } from '../http/admin.js';

const USAGE = 'usage: npm run credits -- grant <address> <amount>\n       npm run credits -- balance <address>';
/** Another CLI run may hold the lock for a moment; wait this long for it. */
const LOCK_WAIT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 10_000;

class CliError extends Error {}
/** The lock names a live process but nothing answers HTTP: perhaps another CLI run. */
class GatewayUnreachable extends CliError {}

type Command = { kind: 'grant'; wallet: string; amount: number } | { kind: 'balance'; wallet: string };

function parseArgs(argv: string[]): Command {
  const [kind, address, amountText, ...rest] = argv;
  if ((kind !== 'grant' && kind !== 'balance') || rest.length > 0) throw new CliError(USAGE);
  const wallet = parseWalletAddress(address);
  if (!wallet) throw new CliError(`credits: "${address ?? ''}" is not a wallet address (0x + 40 hex, valid EIP-55 checksum if mixed case).`);
  if (kind === 'balance') {
    if (amountText !== undefined) throw new CliError(USAGE);
    return { kind, wallet };
  }
  if (amountText === undefined || !/^\d+$/.test(amountText) || Number(amountText) < 1 || Number(amountText) > MAX_GRANT) {
    throw new CliError(`credits: amount must be a whole number from 1 to ${MAX_GRANT}, got "${amountText ?? ''}".`);
  }
  return { kind, wallet, amount: Number(amountText) };
}

function gatewayUrl(config: Config): string {
  // A gateway listening on every interface is reachable on loopback.
  const host = ['0.0.0.0', '::', '[::]'].includes(config.server.host) ? '127.0.0.1' : config.server.host;
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${config.server.port}`;
}

async function viaAdminApi(config: Config, command: Command, pid: number): Promise<Balance> {
  if (!config.adminToken) {
    throw new CliError(`credits: a gateway (pid ${pid}) owns ${config.dataDir}; set ADMIN_TOKEN so the CLI can use its admin API.`);
  }
  const base = gatewayUrl(config);
  const headers: Record<string, string> = { authorization: `Bearer ${config.adminToken}`, 'content-type': 'application/json' };
  const request =
    command.kind === 'grant'
      ? {
          url: `${base}/admin/credits/grant`,
          init: {
            method: 'POST',
            // One key for every attempt: a retry after a lost response grants nothing twice.
            headers: { ...headers, 'idempotency-key': `cli-${randomUUID()}` },
            body: JSON.stringify({ address: command.wallet, amount: command.amount }),
          },
        }
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
    const body = (await res.json().catch(() => undefined)) as { error?: { message?: string } } | undefined;
    if (!res.ok) throw new CliError(`credits: the gateway answered ${res.status}: ${body?.error?.message ?? 'no message'}`);
    return body as unknown as Balance;
  }
  const reason = lastError instanceof Error ? ((lastError.cause as Error | undefined)?.message ?? lastError.message) : String(lastError);
  throw new GatewayUnreachable(`credits: pid ${pid} owns ${config.dataDir} but no gateway answers at ${base} (${reason}).`);
}

async function direct(config: Config, command: Command): Promise<Balance> {
  const accounts = await openAccounts({ dataDir: config.dataDir, publicUrl: config.server.publicUrl, settings: config.accounts });
  try {
    return command.kind === 'grant'
      ? await accounts.ledger.grant(command.wallet, command.amount)
      : await accounts.ledger.balance(command.wallet);
  } finally {
    await accounts.close();
  }
}

export async function runCreditsCli(argv: string[], env: Record<string, string | undefined>): Promise<Balance> {
  const command = parseArgs(argv);
  const config = loadConfig(env);
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

runCreditsCli(process.argv.slice(2), process.env).then(
  (balance) => {
    process.stdout.write(`${JSON.stringify(balance)}\n`);
  },
  (err: unknown) => {
    const message = err instanceof CliError || err instanceof ConfigError ? err.message : `credits: ${err instanceof Error ? err.message : String(err)}`;
    process.stderr.write(`${message}\n`);
    process.exitCode = 1;
  },
);
