import type { MigrationInterface, QueryRunner } from 'typeorm';
import { BALANCE_PER_LINE } from './1795366114383-Foundation.js';

/**
 * The balance trigger ran once per ledger line: an ending batch of a payer's calls updated the
 * payer's row once per call in one transaction, each UPDATE walking past the row's earlier
 * versions of that transaction (about 0.2 ms a line in a batch of 60, `pg_stat_statements` through
 * `npm run bench:load`'s burst). It runs once per INSERT now: the payers' rows locked in id order
 * (the lock order: see `CallEngine`), then each updated once with the sum of its lines.
 */
export class LedgerBalancePerStatement1795930000000 implements MigrationInterface {
  name = 'LedgerBalancePerStatement1795930000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER ledger_entries_balance ON "ledger_entries"`);
    await queryRunner.query(`CREATE OR REPLACE FUNCTION ledger_entries_apply_balance() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              PERFORM 1 FROM organizations WHERE id IN (SELECT org_id FROM new_lines) ORDER BY id FOR NO KEY UPDATE;
              UPDATE organizations o SET balance_micros = o.balance_micros + payer.amount_micros
                FROM (SELECT org_id, sum(amount_micros)::bigint AS amount_micros FROM new_lines GROUP BY org_id) payer
               WHERE o.id = payer.org_id;
              RETURN NULL;
            END $$`);
    await queryRunner.query(`CREATE TRIGGER ledger_entries_balance AFTER INSERT ON "ledger_entries"
            REFERENCING NEW TABLE AS new_lines FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_apply_balance()`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER ledger_entries_balance ON "ledger_entries"`);
    await queryRunner.query(`CREATE OR REPLACE ${BALANCE_PER_LINE.function}`);
    await queryRunner.query(BALANCE_PER_LINE.trigger);
  }
}
