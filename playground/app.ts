/**
 * The playground's entry: wires the wallet, the chat, the tool explorer and the usage table, and reads from
 * `/openapi.json` whether the gateway runs in free mode (its gated routes then take the wallet
 * header alone).
 */
import './app.css';
import { byId } from './dom.js';
import { setUpChat } from './chat.js';
import { setUpExplorer } from './explorer.js';
import { setUpUsage } from './usage.js';
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
  const usage = setUpUsage();
  // After a chat or tool run: the new balance, and the usage record it wrote.
  const refreshBalance = () => {
    void wallet?.refreshBalance();
    if (loadCaller().wallet) void usage.refresh();
  };
  const chat = setUpChat(refreshBalance);
  const explorer = setUpExplorer(refreshBalance);
  const loadForCaller = () => {
    if (!loadCaller().wallet) return;
    void chat.loadModels();
    void explorer.loadTools();
    void usage.refresh();
  };
  wallet = setUpWallet(loadForCaller);
  void showMode();
  loadForCaller();
  refreshBalance();
}

start();
