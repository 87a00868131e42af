import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The balance trigger as this migration made it: once per ledger line. LedgerBalancePerStatement
 * replaced it, and restores it when it is reverted.
 */
export const BALANCE_PER_LINE = {
  function: `FUNCTION ledger_entries_apply_balance() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              UPDATE organizations SET balance_micros = balance_micros + NEW.amount_micros WHERE id = NEW.org_id;
              RETURN NEW;
            END $$`,
  trigger: `CREATE TRIGGER ledger_entries_balance AFTER INSERT ON "ledger_entries"
            FOR EACH ROW EXECUTE FUNCTION ledger_entries_apply_balance()`,
};

export class Foundation1795366114383 implements MigrationInterface {
  name = 'Foundation1795366114383';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "organizations" ("id" character varying(40) NOT NULL, "name" character varying(200) NOT NULL, "timezone" character varying(64) NOT NULL DEFAULT 'UTC', "industry" character varying(32), "external_ref" character varying(200), "parent_id" character varying(40), "is_reseller" boolean NOT NULL DEFAULT false, "tenant_limit" integer NOT NULL DEFAULT '10', "max_concurrent_calls" integer NOT NULL DEFAULT '10', "max_calls_per_hour" integer NOT NULL DEFAULT '600', "rate_per_minute_micros" bigint NOT NULL DEFAULT '0', "rate_per_text_micros" bigint NOT NULL DEFAULT '0', "currency" character(3) NOT NULL DEFAULT 'USD', "balance_micros" bigint NOT NULL DEFAULT '0', "disabled" boolean NOT NULL DEFAULT false, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_6b031fcd0863e3f6b44230163f9" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "organizations_parent_created_idx" ON "organizations"  ("parent_id", "created_at", "id") `);
    await queryRunner.query(
      `CREATE TABLE "members" ("id" character varying(40) NOT NULL, "org_id" character varying(40) NOT NULL, "email" character varying(254), "capabilities" text array NOT NULL, "password_hash" text, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_28b53062261b996d9c99fa12404" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "members_org_idx" ON "members"  ("org_id") `);
    await queryRunner.query(`CREATE UNIQUE INDEX "members_email_key" ON "members"  ("email") `);
    await queryRunner.query(
      `CREATE TABLE "api_keys" ("id" character varying(40) NOT NULL, "org_id" character varying(40) NOT NULL, "member_id" character varying(40) NOT NULL, "label" character varying(200) NOT NULL, "permissions" text array NOT NULL, "prefix" character(12) NOT NULL, "key_hash" character(64) NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "last_used_at" TIMESTAMP(3) WITH TIME ZONE, "revoked_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "PK_5c8a79801b44bd27b79228e1dad" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "api_keys_hash_key" ON "api_keys"  ("key_hash") `);
    await queryRunner.query(`CREATE INDEX "api_keys_org_created_idx" ON "api_keys"  ("org_id", "created_at", "id") `);
    await queryRunner.query(
      `CREATE TABLE "sessions" ("id" character varying(40) NOT NULL, "member_id" character varying(40) NOT NULL, "token_hash" character(64) NOT NULL, "expires_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_3238ef96f18b355b671619111bc" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "sessions_member_idx" ON "sessions"  ("member_id") `);
    await queryRunner.query(`CREATE UNIQUE INDEX "sessions_hash_key" ON "sessions"  ("token_hash") `);
    await queryRunner.query(`CREATE INDEX "sessions_expires_idx" ON "sessions"  ("expires_at") `);
    await queryRunner.query(
      `CREATE TABLE "ledger_entries" ("id" character varying(40) NOT NULL, "org_id" character varying(40) NOT NULL, "subject_org_id" character varying(40) NOT NULL, "kind" character varying(16) NOT NULL, "amount_micros" bigint NOT NULL, "reference" character varying(120), "description" character varying(200) NOT NULL DEFAULT '', "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_6efcb84411d3f08b08450ae75d5" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "ledger_entries_reference_key" ON "ledger_entries"  ("reference") `);
    await queryRunner.query(`CREATE INDEX "ledger_entries_subject_created_idx" ON "ledger_entries"  ("subject_org_id", "created_at") `);
    await queryRunner.query(`CREATE INDEX "ledger_entries_org_created_idx" ON "ledger_entries"  ("org_id", "created_at", "id") `);
    await queryRunner.query(
      `CREATE TABLE "idempotency_records" ("scope" character varying(40) NOT NULL, "key_hash" character(64) NOT NULL, "request_hash" character(64) NOT NULL, "response_status" integer, "response_sealed" text, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_9c03b6adebf385ca991d085063a" PRIMARY KEY ("scope", "key_hash"))`,
    );
    await queryRunner.query(`CREATE INDEX "idempotency_records_created_idx" ON "idempotency_records"  ("created_at") `);
    await queryRunner.query(
      `ALTER TABLE "organizations" ADD CONSTRAINT "FK_f3a7c9411eaa5f9cbc5363de331" FOREIGN KEY ("parent_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "members" ADD CONSTRAINT "FK_d223da0b7fd71b20fc613c356c9" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "api_keys" ADD CONSTRAINT "FK_ba7f5748f500d24aa18041d0439" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "api_keys" ADD CONSTRAINT "FK_34163d14158a753762741134c09" FOREIGN KEY ("member_id") REFERENCES "members"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "sessions" ADD CONSTRAINT "FK_32520aa49cd5a4acd571e81f752" FOREIGN KEY ("member_id") REFERENCES "members"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "ledger_entries" ADD CONSTRAINT "FK_669874d4c60e42ca3899ee25c16" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "ledger_entries" ADD CONSTRAINT "FK_3a3642d714a9d44426dc1ece1c9" FOREIGN KEY ("subject_org_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );

    // The database enforces an append-only ledger and balance = sum of entries, whatever code writes.
    await queryRunner.query(`CREATE FUNCTION ledger_entries_forbid_change() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN RAISE EXCEPTION 'ledger_entries is append-only'; END $$`);
    await queryRunner.query(`CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON "ledger_entries"
            FOR EACH ROW EXECUTE FUNCTION ledger_entries_forbid_change()`);
    await queryRunner.query(`CREATE ${BALANCE_PER_LINE.function}`);
    await queryRunner.query(BALANCE_PER_LINE.trigger);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER ledger_entries_balance ON "ledger_entries"`);
    await queryRunner.query(`DROP TRIGGER ledger_entries_append_only ON "ledger_entries"`);
    await queryRunner.query(`DROP FUNCTION ledger_entries_apply_balance()`);
    await queryRunner.query(`DROP FUNCTION ledger_entries_forbid_change()`);
    await queryRunner.query(`ALTER TABLE "ledger_entries" DROP CONSTRAINT "FK_3a3642d714a9d44426dc1ece1c9"`);
    await queryRunner.query(`ALTER TABLE "ledger_entries" DROP CONSTRAINT "FK_669874d4c60e42ca3899ee25c16"`);
    await queryRunner.query(`ALTER TABLE "sessions" DROP CONSTRAINT "FK_32520aa49cd5a4acd571e81f752"`);
    await queryRunner.query(`ALTER TABLE "api_keys" DROP CONSTRAINT "FK_34163d14158a753762741134c09"`);
    await queryRunner.query(`ALTER TABLE "api_keys" DROP CONSTRAINT "FK_ba7f5748f500d24aa18041d0439"`);
    await queryRunner.query(`ALTER TABLE "members" DROP CONSTRAINT "FK_d223da0b7fd71b20fc613c356c9"`);
    await queryRunner.query(`ALTER TABLE "organizations" DROP CONSTRAINT "FK_f3a7c9411eaa5f9cbc5363de331"`);
    await queryRunner.query(`DROP INDEX "public"."idempotency_records_created_idx"`);
    await queryRunner.query(`DROP TABLE "idempotency_records"`);
    await queryRunner.query(`DROP INDEX "public"."ledger_entries_org_created_idx"`);
    await queryRunner.query(`DROP INDEX "public"."ledger_entries_subject_created_idx"`);
    await queryRunner.query(`DROP INDEX "public"."ledger_entries_reference_key"`);
    await queryRunner.query(`DROP TABLE "ledger_entries"`);
    await queryRunner.query(`DROP INDEX "public"."sessions_expires_idx"`);
    await queryRunner.query(`DROP INDEX "public"."sessions_hash_key"`);
    await queryRunner.query(`DROP INDEX "public"."sessions_member_idx"`);
    await queryRunner.query(`DROP TABLE "sessions"`);
    await queryRunner.query(`DROP INDEX "public"."api_keys_org_created_idx"`);
    await queryRunner.query(`DROP INDEX "public"."api_keys_hash_key"`);
    await queryRunner.query(`DROP TABLE "api_keys"`);
    await queryRunner.query(`DROP INDEX "public"."members_email_key"`);
    await queryRunner.query(`DROP INDEX "public"."members_org_idx"`);
    await queryRunner.query(`DROP TABLE "members"`);
    await queryRunner.query(`DROP INDEX "public"."organizations_parent_created_idx"`);
    await queryRunner.query(`DROP TABLE "organizations"`);
  }
}
