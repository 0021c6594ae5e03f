/**
 * The page's error banner: the API's own message and code, with a word on what the status means
 * for the person (a key to mint, credits to add, a wait, a service down).
 */
import { ApiError } from './api.js';
import { byId } from './dom.js';

const HINTS: Record<number, string> = {
  401: 'Authentication needed: connect a wallet and mint a key, or paste one.',
  402: 'Out of credits: top the wallet up, then try again.',
  403: 'This key belongs to another wallet.',
  429: 'Rate limited: wait and try again.',
  503: 'The service is unavailable right now.',
};

export function showError(err: unknown): void {
  const banner = byId('error');
  banner.replaceChildren();
  if (err instanceof ApiError) {
    if (err.status === null) delete banner.dataset.status;
    else banner.dataset.status = String(err.status);
    banner.dataset.code = err.code;
    const hint = err.status === null ? undefined : HINTS[err.status];
    const wait = err.status === 429 && err.retryAfter ? ` Retry after ${err.retryAfter} s.` : '';
    banner.append(`${err.status ?? 'The answer failed:'} ${err.code}: ${err.message}`);
    if (hint) banner.append(document.createElement('br'), hint + wait);
  } else {
    delete banner.dataset.status;
    banner.dataset.code = 'client_error';
    banner.append(err instanceof Error ? err.message : String(err));
  }
  banner.hidden = false;
}

export function clearError(): void {
  const banner = byId('error');
  banner.hidden = true;
  banner.replaceChildren();
  delete banner.dataset.status;
  delete banner.dataset.code;
}
