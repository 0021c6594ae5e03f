/** The ledger contract suite on the embedded ledger (memory + group-committed SQLite), each test on a fresh DATA_DIR. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqlite } from '../../../gateway/storage/sqlite/sqlite-connection.js';
import { openEmbeddedLedger } from '../../../gateway/ledger/embedded-ledger.js';
import { sqliteUsageHistory } from '../../../gateway/storage/sqlite/sqlite-usage-history.js';
import { ledgerContract } from './ledger-contract.js';

ledgerContract('embedded ledger (SQLite)', async ({ reservationTtlMs, now }) => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-ledger-contract-'));
  const db = await openSqlite(join(dir, 'ledger.sqlite'));
  const ledger = await openEmbeddedLedger(db, { reservationTtlMs, now });
  return {
    ledger,
    usage: sqliteUsageHistory(db),
    async refuseUsageWrites(wallet) {
      await db.exec(`CREATE TRIGGER refuse_usage BEFORE INSERT ON usage_records WHEN NEW.wallet = '${wallet}'
        BEGIN SELECT RAISE(ABORT, 'usage write refused'); END`);
      return () => db.exec('DROP TRIGGER refuse_usage');
    },
    async close() {
      await ledger.stop();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
