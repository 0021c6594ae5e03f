/**
 * The caller: a wallet connected through an injected EIP-1193 provider (`window.ethereum`) or
 * typed in (enough in free mode), a key minted with Sign-In with Ethereum (nonce, message,
 * signature: the same steps as the script in docs/accounts-and-credits.md), with the limits of
 * the "Limits for a new key" form (key-limits.ts), or pasted, and the wallet's balance.
 */
import { createSiweMessage } from 'viem/siwe';
import { getAddress, isAddress, stringToHex } from 'viem';
import { apiJson } from './api.js';
import { byId } from './dom.js';
import { clearError, showError } from './errors-view.js';
import { loadCaller, saveCaller } from './session.js';
import { describeLimits, readKeyLimits, type KeyLimitFields } from './key-limits.js';

interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

declare global {
  interface Window {
    ethereum?: Eip1193Provider;
  }
}

interface Balance {
  credits: number;
  total_deposited: number;
  total_spent: number;
}

/** How long a signed proof stays valid: the gateway accepts at most 15 minutes. */
const PROOF_LIFETIME_MS = 10 * 60_000;

export function setUpWallet(onCallerChange: () => void): { refreshBalance(): Promise<void> } {
  const walletInput = byId<HTMLInputElement>('wallet-address');
  const keyInput = byId<HTMLInputElement>('api-key');
  const status = byId('key-status');
  const caller = loadCaller();
  walletInput.value = caller.wallet;
  keyInput.value = caller.key;
  showKeyStatus(caller.key ? 'A key is set for this browser session.' : 'No key.');

  function showKeyStatus(text: string): void {
    status.textContent = text;
  }

  /** Call as `address` from now on; a key belongs to one wallet, so another wallet starts without one. */
  function switchWallet(address: string): void {
    const previous = loadCaller();
    const key = previous.wallet.toLowerCase() === address.toLowerCase() ? previous.key : '';
    saveCaller({ wallet: address, key });
    walletInput.value = address;
    keyInput.value = key;
    showKeyStatus(key ? 'A key is set for this browser session.' : 'No key.');
  }

  async function useWallet(address: string): Promise<void> {
    switchWallet(address);
    onCallerChange();
    await refreshBalance();
  }

  async function refreshBalance(): Promise<void> {
    const target = byId('balance');
    if (!loadCaller().wallet) {
      target.textContent = '—';
      return;
    }
    try {
      const balance = await apiJson<Balance>('credits/balance');
      target.textContent = `${balance.credits} credits (deposited ${balance.total_deposited}, spent ${balance.total_spent})`;
    } catch (err) {
      target.textContent = 'unavailable';
      showError(err);
    }
  }

  byId('use-wallet').addEventListener('click', () => {
    const typed = walletInput.value.trim();
    if (!isAddress(typed, { strict: false })) return showError(new Error('Type a wallet address: 0x followed by 40 hex characters.'));
    clearError();
    void useWallet(typed);
  });

  byId('connect-wallet').addEventListener('click', async () => {
    clearError();
    try {
      const account = await connect();
      await useWallet(account);
    } catch (err) {
      showError(err);
    }
  });

  byId('mint-key').addEventListener('click', async () => {
    clearError();
    try {
      const limits = readKeyLimits();
      const account = await connect();
      switchWallet(account);
      showKeyStatus('Sign the message in your wallet…');
      const key = await mintKey(account, limits);
      saveCaller({ wallet: account, key });
      keyInput.value = key;
      const limited = describeLimits(limits);
      showKeyStatus(`Key minted with a SIWE proof${limited ? ` (limits: ${limited})` : ''}; kept for this browser session only.`);
      onCallerChange();
      await refreshBalance();
    } catch (err) {
      showKeyStatus(loadCaller().key ? 'A key is set for this browser session.' : 'No key.');
      showError(err);
    }
  });

  byId('save-key').addEventListener('click', () => {
    clearError();
    const key = keyInput.value.trim();
    // The key goes with the address in the box, even if "Use address" was not pressed first.
    const typed = walletInput.value.trim();
    saveCaller({ wallet: isAddress(typed, { strict: false }) ? typed : loadCaller().wallet, key });
    showKeyStatus(key ? 'Pasted key kept for this browser session.' : 'No key.');
    onCallerChange();
    void refreshBalance();
  });

  byId('refresh-balance').addEventListener('click', () => {
    clearError();
    void refreshBalance();
  });

  return { refreshBalance };
}

async function connect(): Promise<string> {
  const provider = window.ethereum;
  if (!provider) throw new Error('No browser wallet found (window.ethereum). Type an address, or paste a key.');
  const accounts = (await provider.request({ method: 'eth_requestAccounts' })) as string[];
  if (!accounts[0]) throw new Error('The wallet shared no account.');
  return getAddress(accounts[0]);
}

/** GET /auth/nonce, a SIWE message for the domain and uri it names, a signature, POST /auth/api-keys with `limits`. */
async function mintKey(address: string, limits: KeyLimitFields): Promise<string> {
  const provider = window.ethereum as Eip1193Provider;
  const { nonce, domain, uri } = await apiJson<{ nonce: string; domain: string; uri: string }>('auth/nonce');
  const chainId = Number.parseInt(String(await provider.request({ method: 'eth_chainId' })), 16) || 1;
  const message = createSiweMessage({
    address: address as `0x${string}`,
    chainId,
    domain,
    uri,
    nonce,
    version: '1',
    statement: 'Create a Switchyard API key in the playground.',
    issuedAt: new Date(),
    expirationTime: new Date(Date.now() + PROOF_LIFETIME_MS),
  });
  const signature = (await provider.request({ method: 'personal_sign', params: [stringToHex(message), address] })) as string;
  const created = await apiJson<{ key: string }>('auth/api-keys', { body: { name: 'playground', message, signature, ...limits } });
  return created.key;
}
