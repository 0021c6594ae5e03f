/**
 * Compile the test contracts from Solidity source with solc-js (the bundled compiler, never a
 * download), EVM version shanghai. Results are cached in the OS temp dir by source hash, so
 * only the first test file of a run pays the compile.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Abi, Hex } from 'viem';

export interface CompiledContract {
  abi: Abi;
  bytecode: Hex;
}

interface Solc {
  compile(input: string): string;
  version(): string;
}

interface SolcOutput {
  errors?: Array<{ severity: string; formattedMessage: string }>;
  contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
}

export const CONTRACTS_DIR = resolve(import.meta.dirname, '../fixtures/contracts');

/**
 * Every contract in test/fixtures/contracts, by contract name.
 *
 * @example
 *   const { TestToken } = compileContracts()
 *   await wallet.deployContract({ abi: TestToken.abi, bytecode: TestToken.bytecode, args: [...] })
 */
export function compileContracts(dir = CONTRACTS_DIR): Record<string, CompiledContract> {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.sol'))
    .sort();
  const sources: Record<string, { content: string }> = {};
  for (const file of files) sources[file] = { content: readFileSync(join(dir, file), 'utf8') };
  const solc = createRequire(import.meta.url)('solc') as Solc;
  const hash = createHash('sha256').update(solc.version()).update(JSON.stringify(sources)).digest('hex').slice(0, 16);
  const cacheDir = join(tmpdir(), 'switchyard-solc-cache');
  const cacheFile = join(cacheDir, `${hash}.json`);
  if (existsSync(cacheFile)) return JSON.parse(readFileSync(cacheFile, 'utf8')) as Record<string, CompiledContract>;

  const input = {
    language: 'Solidity',
    sources,
    settings: {
      evmVersion: 'shanghai',
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  const compiled: Record<string, CompiledContract> = {};
  for (const byName of Object.values(output.contracts)) {
    for (const [name, contract] of Object.entries(byName)) {
      compiled[name] = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
    }
  }
  mkdirSync(cacheDir, { recursive: true });
  writeFileSync(cacheFile, JSON.stringify(compiled));
  return compiled;
}
