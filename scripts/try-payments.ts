/**
 * Try payments locally (docs/payments.md, "Try payments locally"): the pieces the payment tests
 * run on, started for a person: a Hardhat chain (test/helpers/evm-node.ts), an EIP-3009 stablecoin
 * compiled from test/fixtures/contracts, an x402 facilitator running the protocol's own code
 * (test/fixtures/x402/test-facilitator.ts), a payer holding 1000 of the token, and a gateway
 * config with x402 and deposits on that chain. It prints the variables to start the gateway with
 * and runs until Ctrl-C (or SIGTERM), then stops the chain and the facilitator.
 *
 *   npx tsx scripts/try-payments.ts [--dir data/try-payments]
 *
 * Everything holds Hardhat's public development keys: nothing here is worth anything, and none
 * of it may ever hold real money.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { toHex } from 'viem';
import { startEvmNode } from '../test/helpers/evm-node.js';
import { compileContracts } from '../test/helpers/solidity.js';
import { startTestFacilitator } from '../test/fixtures/x402/test-facilitator.js';

const ROOT = resolve(import.meta.dirname, '..');
const NETWORK = 'eip155:31337';
const DECIMALS = 6;
const UNITS_PER_CREDIT = 10_000; // 0.01 TUSD a credit
const PAYER_BALANCE = 1000n * 10n ** BigInt(DECIMALS);
/** Dev accounts by role: 0 deploys, 1 is the facilitator (it pays the gas), 2 the payer, 4 receives x402 payments, 5 deposits. */
const ROLES = { facilitator: 1, payer: 2, payTo: 4, treasury: 5 } as const;

const dirAt = process.argv.indexOf('--dir');
const dir = resolve(dirAt === -1 ? join(ROOT, 'data/try-payments') : process.argv[dirAt + 1]);
mkdirSync(dir, { recursive: true });

const node = await startEvmNode();
let facilitator: Awaited<ReturnType<typeof startTestFacilitator>> | undefined;
const stopAll = async (): Promise<void> => {
  await facilitator?.stop().catch(() => undefined);
  await node.stop();
};
try {
  const { Eip3009Token } = compileContracts();
  const token = await node.deploy(Eip3009Token, ['Test USD', '2']);
  const payer = node.accounts[ROLES.payer];
  const minted = await node
    .wallet(0)
    .writeContract({ address: token, abi: Eip3009Token.abi, functionName: 'mint', args: [payer.address, PAYER_BALANCE] });
  await node.publicClient.waitForTransactionReceipt({ hash: minted });
  facilitator = await startTestFacilitator(node.wallet(ROLES.facilitator), NETWORK);

  // The shipped config with payments on: x402 pays to one address, deposits go to another (the
  // gateway refuses a payTo that is also a treasury: a payment would be credited twice).
  const shipped = JSON.parse(readFileSync(join(ROOT, 'config/gateway.json'), 'utf8')) as Record<string, unknown>;
  const config = {
    ...shipped,
    freeMode: false,
    x402: {
      facilitatorUrl: facilitator.url,
      payTo: node.accounts[ROLES.payTo].address,
      assets: [
        { network: NETWORK, address: token, name: 'Test USD', version: '2', unitsPerCredit: String(UNITS_PER_CREDIT), rpcUrl: node.url },
      ],
      topUpCredits: [100, 1000],
    },
    deposits: {
      pollIntervalMs: 1000,
      chains: {
        local: {
          treasury: node.accounts[ROLES.treasury].address,
          confirmations: 1,
          tokens: [{ symbol: 'TUSD', address: token, decimals: DECIMALS, unitsPerCredit: UNITS_PER_CREDIT }],
        },
      },
    },
  };
  const configPath = join(dir, 'gateway.json');
  writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`);

  const privateKey = toHex(payer.getHdKey().privateKey!);
  const env = {
    SWITCHYARD_CONFIG: configPath,
    DATA_DIR: join(dir, 'data'),
    RPC_URL_LOCAL: node.url,
    PRIVATE_KEY: privateKey,
    TOKEN: token,
  };
  console.log(`local chain   ${node.url} (chain id 31337), Test USD (TUSD, ${DECIMALS} decimals, EIP-3009) at ${token}`);
  console.log(`facilitator   ${facilitator.url} (settles from dev account ${ROLES.facilitator}, which pays the gas)`);
  console.log(`payer         ${payer.address} holds 1000 TUSD (Hardhat dev account ${ROLES.payer}: a public key, never for real money)`);
  console.log(`x402 pays to  ${config.x402.payTo}; deposits go to ${config.deposits.chains.local.treasury}; 1 credit = 0.01 TUSD`);
  console.log(`config        ${configPath}`);
  console.log('\nIn another terminal, from this directory:');
  console.log(
    `export ${Object.entries(env)
      .map(([name, value]) => `${name}=${value}`)
      .join(' ')}`,
  );
  console.log('npm start');
  console.log('\nready: Ctrl-C stops the chain and the facilitator');
} catch (err) {
  await stopAll();
  throw err;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void stopAll().then(() => process.exit(0)));
}
