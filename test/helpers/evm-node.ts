/**
 * A local EVM chain for tests and benchmarks: a Hardhat 2 node (Prague rules, so EIP-7702 works)
 * on a free 127.0.0.1 port, with viem clients for Hardhat's well-known dev accounts. Started as
 * one real process (no npx wrapper) and stopped by its pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import {
  createPublicClient,
  createWalletClient,
  getAddress,
  defineChain,
  http,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
  type WalletClient,
  type Chain,
  type Transport,
  type Account,
} from 'viem';
import { mnemonicToAccount, type HDAccount } from 'viem/accounts';
import type { CompiledContract } from './solidity.js';

/** Hardhat's default dev mnemonic (public knowledge; its first accounts hold 10 000 ETH each on the local node). */
export const DEV_MNEMONIC = 'test test test test test test test test test test test junk';
const DEV_ACCOUNT_COUNT = 6;

export const localChain = defineChain({
  id: 31337,
  name: 'Local',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: ['http://127.0.0.1:8545'] } },
});

export interface EvmNode {
  url: string;
  port: number;
  pid: number;
  publicClient: PublicClient;
  accounts: HDAccount[];
  wallet(index?: number): WalletClient<Transport, Chain, Account>;
  /** Deploy a compiled contract from account `from` (default 0) and wait for its address. */
  deploy(contract: CompiledContract, args?: readonly unknown[], from?: number): Promise<Address>;
  /** Raw JSON-RPC call (hardhat_* and evm_* methods). */
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  stop(): Promise<void>;
}

const HARDHAT_DIR = resolve(import.meta.dirname, '../fixtures/hardhat');
const HARDHAT_CLI = resolve(import.meta.dirname, '../../node_modules/hardhat/internal/cli/cli.js');

/** A port the OS says is free right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/**
 * @example
 *   const node = await startEvmNode()
 *   after(() => node.stop())
 */
export async function startEvmNode(options: { readyTimeoutMs?: number } = {}): Promise<EvmNode> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [HARDHAT_CLI, 'node', '--port', String(port), '--hostname', '127.0.0.1'], {
    cwd: HARDHAT_DIR,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true', DO_NOT_TRACK: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // If the test process dies without calling stop(), do not leave a node running.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.once('exit', () => process.off('exit', killOnExit));
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    if (output.length < 20_000) output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    if (output.length < 20_000) output += chunk.toString();
  });
  try {
    await waitUntilReady(url, child, options.readyTimeoutMs ?? 60_000, () => output);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }

  const chain = { ...localChain, rpcUrls: { default: { http: [url] } } };
  const publicClient = createPublicClient({ chain, transport: http(url) }) as PublicClient;
  const accounts = Array.from({ length: DEV_ACCOUNT_COUNT }, (_, addressIndex) => mnemonicToAccount(DEV_MNEMONIC, { addressIndex }));
  const wallets = accounts.map((account) => createWalletClient({ account, chain, transport: http(url) }));
  let nextId = 1;

  const node: EvmNode = {
    url,
    port,
    pid: child.pid!,
    publicClient,
    accounts,
    wallet: (index = 0) => wallets[index],
    async deploy(contract, args = [], from = 0) {
      const hash = await wallets[from].deployContract({ abi: contract.abi as Abi, bytecode: contract.bytecode, args: args as unknown[] });
      const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
      if (!receipt.contractAddress) throw new Error('deployment produced no contract address');
      return getAddress(receipt.contractAddress);
    },
    async rpc<T>(method: string, params: unknown[] = []) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
      });
      const body = (await response.json()) as { result?: T; error?: { message: string } };
      if (body.error) throw new Error(`${method}: ${body.error.message}`);
      return body.result as T;
    },
    stop: () => stopProcess(child),
  };
  return node;
}

async function waitUntilReady(url: string, child: ChildProcess, timeoutMs: number, output: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`hardhat node exited with ${child.exitCode}:\n${output()}`);
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'eth_chainId', params: [] }),
      });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`hardhat node not ready after ${timeoutMs} ms:\n${output()}`);
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
}
