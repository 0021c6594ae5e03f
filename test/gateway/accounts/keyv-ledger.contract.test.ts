/** The ledger contract suite on the embedded (Keyv + SQLite) ledger, each test on a fresh DATA_DIR. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../../gateway/accounts/store.js';
import { KeyvLedger } from '../../../gateway/accounts/ledger.js';
import { ledgerContract } from './ledger-contract.js';

ledgerContract('Keyv ledger (SQLite)', async ({ reservationTtlMs, now }) => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-ledger-contract-'));
  const store = await openStore(dir);
  const ledger = new KeyvLedger(store, { reservationTtlMs, now });
  return {
    ledger,
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
