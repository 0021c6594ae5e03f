/**
 * A test wallet in the page: a viem local account behind a minimal EIP-1193 provider on
 * `window.ethereum`. The page asks for accounts, the chain id and `personal_sign`; the signing
 * runs in the test process with the account's private key, so the SIWE proof is real.
 */
import type { Page } from 'playwright-core';
import type { PrivateKeyAccount } from 'viem/accounts';

export async function injectTestWallet(page: Page, account: PrivateKeyAccount): Promise<{ signatures: string[] }> {
  const signatures: string[] = [];
  await page.exposeFunction('__switchyardTestSign', async (hexMessage: `0x${string}`) => {
    const signature = await account.signMessage({ message: { raw: hexMessage } });
    signatures.push(signature);
    return signature;
  });
  // A string, not a function: tsx rewrites functions (name helpers) that then fail in the page.
  await page.addInitScript(`(() => {
    const address = ${JSON.stringify(account.address)};
    window.ethereum = {
      async request({ method, params }) {
        switch (method) {
          case 'eth_requestAccounts':
          case 'eth_accounts':
            return [address];
          case 'eth_chainId':
            return '0x1';
          case 'personal_sign': {
            const [message, signer] = params;
            if (signer.toLowerCase() !== address.toLowerCase()) throw Object.assign(new Error('Unknown account'), { code: 4100 });
            // The binding exposed above, looked up at call time.
            return window.__switchyardTestSign(message);
          }
          default:
            throw Object.assign(new Error('Unsupported method ' + method), { code: 4200 });
        }
      },
    };
  })();`);
  return { signatures };
}
