/**
 * x402 payment records in PostgreSQL (cluster mode; migration 8). A claim is one `insert … on
 * conflict do nothing`: of two instances claiming one payment, exactly one inserts it.
 *
 * @example
 *   const records = new PostgresX402PaymentRecords(db.sql)
 */
import { guarded, type Sql } from './database.js';
import { recordFromRow, type X402PaymentRow } from '../x402-payment-rows.js';
import { type X402PaymentRecord, type X402PaymentRecords } from '../../x402/payment-records.js';

export class PostgresX402PaymentRecords implements X402PaymentRecords {
  /** A row as `recordFromRow` reads it: the amount as text (it may pass 2^53). */
  private readonly columns;

  constructor(private readonly sql: Sql) {
    this.columns = sql.unsafe(
      'id, wallet, network, asset, amount::text as amount, nonce, signature, valid_before, from_block::text as from_block, pay_to, units_per_credit::text as units_per_credit, state, tx',
    );
  }

  async find(id: string): Promise<X402PaymentRecord | undefined> {
    const rows = await guarded(() => this.sql<X402PaymentRow[]>`select ${this.columns} from x402_payments where id = ${id}`);
    return rows[0] ? recordFromRow(rows[0]) : undefined;
  }

  async claim(record: Omit<X402PaymentRecord, 'state' | 'transaction'>): Promise<X402PaymentRecord | undefined> {
    return guarded(async () => {
      const inserted = await this.sql`
        insert into x402_payments (id, wallet, network, asset, amount, nonce, signature, valid_before, from_block, pay_to, units_per_credit, state)
        values (${record.id}, ${record.wallet}, ${record.network}, ${record.asset}, ${String(record.amount)}::numeric,
          ${record.nonce}, ${record.signature}, ${record.validBefore}::bigint,
          ${String(record.fromBlock)}::numeric, ${record.payTo}, ${String(record.unitsPerCredit)}::numeric, 'pending')
        on conflict (id) do nothing returning id`;
      if (inserted.length > 0) return undefined;
      const rows = await this.sql<X402PaymentRow[]>`select ${this.columns} from x402_payments where id = ${record.id}`;
      return rows[0] ? recordFromRow(rows[0]) : undefined;
    });
  }

  async credited(id: string, transaction: string | null): Promise<void> {
    await guarded(() => this.sql`update x402_payments set state = 'credited', tx = coalesce(${transaction}, tx) where id = ${id}`);
  }

  async forget(id: string): Promise<void> {
    await guarded(() => this.sql`delete from x402_payments where id = ${id} and state = 'pending'`);
  }

  async pending(limit: number): Promise<X402PaymentRecord[]> {
    const rows = await guarded(
      () => this.sql<X402PaymentRow[]>`select ${this.columns} from x402_payments where state = 'pending' order by seq limit ${limit}`,
    );
    return rows.map(recordFromRow);
  }
}
