/**
 * The playground's entry: wires the wallet, the chat and the tool explorer, and reads from
 * `/openapi.json` whether the gateway runs in free mode (its gated routes then take the wallet
 * header alone).
 */
import './app.css';
import { byId } from './dom.js';
import { setUpChat } from './chat.js';
import { setUpExplorer } from './explorer.js';
import { setUpWallet } from './wallet.js';
import { loadCaller } from './session.js';

interface OpenApiDocument {
  paths: Record<string, Record<string, { security?: Array<Record<string, string[]>> }>>;
}

async function showMode(): Promise<void> {
  const badge = byId('mode');
  try {
    const document = (await (await fetch('openapi.json')).json()) as OpenApiDocument;
    const security = document.paths['/v1/chat/completions']?.post?.security ?? [];
    const free = security.some((requirement) => !('bearerKey' in requirement));
    badge.textContent = free ? 'free mode: a wallet address is enough' : 'credits on: a key of your wallet is needed';
    badge.dataset.mode = free ? 'free' : 'credits';
  } catch {
    badge.textContent = 'mode unknown';
  }
}

function start(): void {
  let wallet: { refreshBalance(): Promise<void> } | undefined;
  const refreshBalance = () => void wallet?.refreshBalance();
  const chat = setUpChat(refreshBalance);
  const explorer = setUpExplorer(refreshBalance);
  const loadForCaller = () => {
    if (!loadCaller().wallet) return;
    void chat.loadModels();
    void explorer.loadTools();
  };
  wallet = setUpWallet(loadForCaller);
  void showMode();
  loadForCaller();
  refreshBalance();
}

start();
