/**
 * Who the page calls as: the wallet address and, when one was minted or pasted, the API key.
 * Kept in sessionStorage only, so closing the tab forgets the key.
 */
const WALLET = 'switchyard.wallet';
const KEY = 'switchyard.key';

export interface Caller {
  wallet: string;
  key: string;
}

export function loadCaller(): Caller {
  return { wallet: sessionStorage.getItem(WALLET) ?? '', key: sessionStorage.getItem(KEY) ?? '' };
}

export function saveCaller(caller: Caller): void {
  store(WALLET, caller.wallet);
  store(KEY, caller.key);
}

function store(name: string, value: string): void {
  if (value) sessionStorage.setItem(name, value);
  else sessionStorage.removeItem(name);
}
