/**
 * Every schema change, in order. A migration is applied once, at start; the pending ones of a
 * start go in one transaction, so a failing one leaves the schema as it was. Its number is its
 * version. Never edit one that has shipped (its SQL): add the next.
 */
import * as ledger from './0001-ledger.js';
import * as apiKeys from './0002-api-keys.js';
import * as ledgerBatches from './0003-ledger-batches.js';
import * as externalCredits from './0004-external-credits.js';
import * as keptRounds from './0005-kept-rounds.js';
import * as responses from './0006-responses.js';
import * as deposits from './0007-deposits.js';
import * as x402Payments from './0008-x402-payments.js';
import * as extendWaitsForDisk from './0009-extend-waits-for-disk.js';
import * as ledgerBatchInline from './0010-ledger-batch-inline.js';
import * as ledgerChargeStep from './0011-ledger-charge-step.js';
import * as responseItems from './0012-response-items.js';
import * as usageRecords from './0013-usage-records.js';
import * as keyLimits from './0014-key-limits.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [
  { version: 1, ...ledger },
  { version: 2, ...apiKeys },
  { version: 3, ...ledgerBatches },
  { version: 4, ...externalCredits },
  { version: 5, ...keptRounds },
  { version: 6, ...responses },
  { version: 7, ...deposits },
  { version: 8, ...x402Payments },
  { version: 9, ...extendWaitsForDisk },
  { version: 10, ...ledgerBatchInline },
  { version: 11, ...ledgerChargeStep },
  { version: 12, ...responseItems },
  { version: 13, ...usageRecords },
  { version: 14, ...keyLimits },
];
