import { MigrationInterface, QueryRunner } from 'typeorm';

export class VoiceOrganization1795368039388 implements MigrationInterface {
  name = 'VoiceOrganization1795368039388';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "agents" ("id" character varying(40) NOT NULL, "org_id" character varying(40) NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "name" character varying(200) NOT NULL, "kind" character varying(32) NOT NULL DEFAULT 'appointment', "greeting" text NOT NULL DEFAULT '', "voice" character varying(64) NOT NULL DEFAULT 'default', "prompt" text NOT NULL DEFAULT '', CONSTRAINT "PK_9c653f28ae19c5884d5baf6a1d9" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "agents_org_created_idx" ON "agents"  ("org_id", "created_at", "id") `);
    await queryRunner.query(
      `CREATE TABLE "phone_numbers" ("id" character varying(40) NOT NULL, "org_id" character varying(40) NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "phone_number" character varying(16) NOT NULL, "agent_id" character varying(40), CONSTRAINT "PK_a72cf9a1834a1417e195fdd2c02" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "phone_numbers_number_key" ON "phone_numbers"  ("phone_number") `);
    await queryRunner.query(`CREATE INDEX "phone_numbers_org_created_idx" ON "phone_numbers"  ("org_id", "created_at", "id") `);
    await queryRunner.query(
      `CREATE TABLE "contacts" ("id" character varying(40) NOT NULL, "org_id" character varying(40) NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "name" character varying(200) NOT NULL, "phone_number" character varying(16) NOT NULL, "email" character varying(254), "metadata" jsonb NOT NULL DEFAULT '{}', CONSTRAINT "PK_b99cd40cfd66a99f1571f4f72e6" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "contacts_org_phone_key" ON "contacts"  ("org_id", "phone_number") `);
    await queryRunner.query(`CREATE INDEX "contacts_org_created_idx" ON "contacts"  ("org_id", "created_at", "id") `);
    await queryRunner.query(
      `CREATE TABLE "locations" ("id" character varying(40) NOT NULL, "org_id" character varying(40) NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "name" character varying(200) NOT NULL, "address" text NOT NULL DEFAULT '', "is_main" boolean NOT NULL DEFAULT false, CONSTRAINT "PK_7cc1c9e3853b94816c094825e74" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "locations_org_created_idx" ON "locations"  ("org_id", "created_at", "id") `);
    await queryRunner.query(
      `CREATE TABLE "services" ("id" character varying(40) NOT NULL, "org_id" character varying(40) NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "name" character varying(200) NOT NULL, "description" text NOT NULL DEFAULT '', "duration_minutes" integer NOT NULL DEFAULT '30', CONSTRAINT "PK_ba2d347a3168a296416c6c5ccb2" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "services_org_created_idx" ON "services"  ("org_id", "created_at", "id") `);
    await queryRunner.query(
      `CREATE TABLE "campaigns" ("id" character varying(40) NOT NULL, "org_id" character varying(40) NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "name" character varying(200) NOT NULL, "agent_id" character varying(40) NOT NULL, "state" character varying(16) NOT NULL DEFAULT 'draft', "calling_hours_start" character(5), "calling_hours_end" character(5), "weekdays" smallint array, "retry_max" integer NOT NULL DEFAULT '0', "retry_delay_seconds" integer NOT NULL DEFAULT '0', "simulate" jsonb, "completed_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "PK_831e3fcd4fc45b4e4c3f57a9ee4" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "campaigns_state_idx" ON "campaigns"  ("state") `);
    await queryRunner.query(`CREATE INDEX "campaigns_org_created_idx" ON "campaigns"  ("org_id", "created_at", "id") `);
    await queryRunner.query(
      `CREATE TABLE "campaign_contacts" ("campaign_id" character varying(40) NOT NULL, "contact_id" character varying(40) NOT NULL, "position" integer NOT NULL, "state" character varying(16) NOT NULL DEFAULT 'pending', "attempts" integer NOT NULL DEFAULT '0', "next_attempt_at" TIMESTAMP(3) WITH TIME ZONE, "last_call_id" character varying(40), CONSTRAINT "PK_78a24e05f57c5a9d22806b0962c" PRIMARY KEY ("campaign_id", "contact_id"))`,
    );
    await queryRunner.query(`CREATE INDEX "campaign_contacts_due_idx" ON "campaign_contacts"  ("campaign_id", "state", "next_attempt_at") `);
    await queryRunner.query(
      `CREATE TABLE "calls" ("id" character varying(40) NOT NULL, "org_id" character varying(40) NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "payer_org_id" character varying(40) NOT NULL, "agent_id" character varying(40) NOT NULL, "contact_id" character varying(40), "campaign_id" character varying(40), "direction" character varying(8) NOT NULL, "status" character varying(16) NOT NULL, "outcome" character varying(16), "end_reason" character varying(16), "phone_number" character varying(16) NOT NULL, "our_number" character varying(16), "simulate" jsonb NOT NULL, "last_sequence" integer NOT NULL DEFAULT '0', "dialed_at" TIMESTAMP(3) WITH TIME ZONE, "started_at" TIMESTAMP(3) WITH TIME ZONE, "ended_at" TIMESTAMP(3) WITH TIME ZONE, "duration_seconds" integer, "charge_micros" bigint, CONSTRAINT "PK_d9171d91f8dd1a649659f1b6a20" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "calls_campaign_idx" ON "calls"  ("campaign_id") `);
    await queryRunner.query(`CREATE INDEX "calls_status_idx" ON "calls"  ("status") `);
    await queryRunner.query(`CREATE INDEX "calls_payer_ended_idx" ON "calls"  ("payer_org_id", "ended_at") `);
    await queryRunner.query(`CREATE INDEX "calls_org_created_idx" ON "calls"  ("org_id", "created_at", "id") `);
    await queryRunner.query(
      `CREATE TABLE "call_events" ("id" character varying(40) NOT NULL, "call_id" character varying(40) NOT NULL, "org_id" character varying(40) NOT NULL, "sequence" integer NOT NULL, "event" character varying(32) NOT NULL, "payload" jsonb NOT NULL, "occurred_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "relayed_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "PK_ae7349495543762c8be7de28b7f" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "call_events_unrelayed_idx" ON "call_events"  ("relayed_at") WHERE relayed_at IS NULL`);
    await queryRunner.query(`CREATE INDEX "call_events_org_created_idx" ON "call_events"  ("org_id", "created_at", "id") `);
    await queryRunner.query(`CREATE UNIQUE INDEX "call_events_call_sequence_key" ON "call_events"  ("call_id", "sequence") `);
    await queryRunner.query(
      `CREATE TABLE "messages" ("id" character varying(40) NOT NULL, "org_id" character varying(40) NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "payer_org_id" character varying(40) NOT NULL, "call_id" character varying(40), "from_number" character varying(16) NOT NULL, "to_number" character varying(16) NOT NULL, "body" text NOT NULL, "charge_micros" bigint NOT NULL, CONSTRAINT "PK_18325f38ae6de43878487eff986" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "messages_call_key" ON "messages"  ("call_id") `);
    await queryRunner.query(`CREATE INDEX "messages_org_created_idx" ON "messages"  ("org_id", "created_at", "id") `);
    await queryRunner.query(`ALTER TABLE "organizations" ADD "sms_sender" character varying(16)`);
    await queryRunner.query(`ALTER TABLE "organizations" ADD "carrier_provider" character varying(32) NOT NULL DEFAULT 'simulator'`);
    await queryRunner.query(`ALTER TABLE "organizations" ADD "booking_page_enabled" boolean NOT NULL DEFAULT true`);
    await queryRunner.query(`ALTER TABLE "organizations" ADD "booking_page_headline" character varying(200)`);
    await queryRunner.query(
      `ALTER TABLE "agents" ADD CONSTRAINT "FK_2187d33767c1527adf0f62f8c8f" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "phone_numbers" ADD CONSTRAINT "FK_4a3f670c32c3426523fa150ea15" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "phone_numbers" ADD CONSTRAINT "FK_305ba30735c76d975c5784367cc" FOREIGN KEY ("agent_id") REFERENCES "agents"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "contacts" ADD CONSTRAINT "FK_1d08650bc5dee86e125aa413a13" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "locations" ADD CONSTRAINT "FK_674420bda64055b8520843dffac" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "services" ADD CONSTRAINT "FK_1cde87d283c408140fc80a13051" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "campaigns" ADD CONSTRAINT "FK_b67f026924d0e2b8f3d0e5a2d1f" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "campaigns" ADD CONSTRAINT "FK_9d39567bfacde57533e84c81416" FOREIGN KEY ("agent_id") REFERENCES "agents"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "campaign_contacts" ADD CONSTRAINT "FK_7265978c9afe98d1e1ed85e65da" FOREIGN KEY ("campaign_id") REFERENCES "campaigns"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "campaign_contacts" ADD CONSTRAINT "FK_2ef181b0f1a589eb8a2b515d885" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "calls" ADD CONSTRAINT "FK_a6ea3d36be4ff475c99583300ab" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "messages" ADD CONSTRAINT "FK_52f72a2dc840864bb905c4cbe1b" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );

    // The call event body (SPEC.md §6.1), defined once so every statement that changes a call writes
    // its event from the very row it changed.
    await queryRunner.query(`CREATE FUNCTION iso_utc(t timestamptz) RETURNS text LANGUAGE sql IMMUTABLE AS $$
            SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$`);
    await queryRunner.query(`CREATE FUNCTION call_event_payload(c calls, event text, occurred_at timestamptz) RETURNS jsonb
            LANGUAGE sql STABLE AS $$
            SELECT jsonb_build_object(
              'event', event, 'call_id', c.id, 'org_id', c.org_id, 'status', c.status, 'sequence', c.last_sequence,
              'occurred_at', iso_utc(occurred_at), 'phone_number', c.phone_number, 'direction', c.direction,
              'outcome', c.outcome, 'end_reason', c.end_reason, 'duration_seconds', c.duration_seconds,
              'started_at', iso_utc(c.started_at), 'ended_at', iso_utc(c.ended_at), 'agent_id', c.agent_id,
              'contact_id', c.contact_id, 'campaign_id', c.campaign_id) $$`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION call_event_payload(calls, text, timestamptz)`);
    await queryRunner.query(`DROP FUNCTION iso_utc(timestamptz)`);
    await queryRunner.query(`ALTER TABLE "messages" DROP CONSTRAINT "FK_52f72a2dc840864bb905c4cbe1b"`);
    await queryRunner.query(`ALTER TABLE "calls" DROP CONSTRAINT "FK_a6ea3d36be4ff475c99583300ab"`);
    await queryRunner.query(`ALTER TABLE "campaign_contacts" DROP CONSTRAINT "FK_2ef181b0f1a589eb8a2b515d885"`);
    await queryRunner.query(`ALTER TABLE "campaign_contacts" DROP CONSTRAINT "FK_7265978c9afe98d1e1ed85e65da"`);
    await queryRunner.query(`ALTER TABLE "campaigns" DROP CONSTRAINT "FK_9d39567bfacde57533e84c81416"`);
    await queryRunner.query(`ALTER TABLE "campaigns" DROP CONSTRAINT "FK_b67f026924d0e2b8f3d0e5a2d1f"`);
    await queryRunner.query(`ALTER TABLE "services" DROP CONSTRAINT "FK_1cde87d283c408140fc80a13051"`);
    await queryRunner.query(`ALTER TABLE "locations" DROP CONSTRAINT "FK_674420bda64055b8520843dffac"`);
    await queryRunner.query(`ALTER TABLE "contacts" DROP CONSTRAINT "FK_1d08650bc5dee86e125aa413a13"`);
    await queryRunner.query(`ALTER TABLE "phone_numbers" DROP CONSTRAINT "FK_305ba30735c76d975c5784367cc"`);
    await queryRunner.query(`ALTER TABLE "phone_numbers" DROP CONSTRAINT "FK_4a3f670c32c3426523fa150ea15"`);
    await queryRunner.query(`ALTER TABLE "agents" DROP CONSTRAINT "FK_2187d33767c1527adf0f62f8c8f"`);
    await queryRunner.query(`ALTER TABLE "organizations" DROP COLUMN "booking_page_headline"`);
    await queryRunner.query(`ALTER TABLE "organizations" DROP COLUMN "booking_page_enabled"`);
    await queryRunner.query(`ALTER TABLE "organizations" DROP COLUMN "carrier_provider"`);
    await queryRunner.query(`ALTER TABLE "organizations" DROP COLUMN "sms_sender"`);
    await queryRunner.query(`DROP INDEX "public"."messages_org_created_idx"`);
    await queryRunner.query(`DROP INDEX "public"."messages_call_key"`);
    await queryRunner.query(`DROP TABLE "messages"`);
    await queryRunner.query(`DROP INDEX "public"."call_events_call_sequence_key"`);
    await queryRunner.query(`DROP INDEX "public"."call_events_org_created_idx"`);
    await queryRunner.query(`DROP INDEX "public"."call_events_unrelayed_idx"`);
    await queryRunner.query(`DROP TABLE "call_events"`);
    await queryRunner.query(`DROP INDEX "public"."calls_org_created_idx"`);
    await queryRunner.query(`DROP INDEX "public"."calls_payer_ended_idx"`);
    await queryRunner.query(`DROP INDEX "public"."calls_status_idx"`);
    await queryRunner.query(`DROP INDEX "public"."calls_campaign_idx"`);
    await queryRunner.query(`DROP TABLE "calls"`);
    await queryRunner.query(`DROP INDEX "public"."campaign_contacts_due_idx"`);
    await queryRunner.query(`DROP TABLE "campaign_contacts"`);
    await queryRunner.query(`DROP INDEX "public"."campaigns_org_created_idx"`);
    await queryRunner.query(`DROP INDEX "public"."campaigns_state_idx"`);
    await queryRunner.query(`DROP TABLE "campaigns"`);
    await queryRunner.query(`DROP INDEX "public"."services_org_created_idx"`);
    await queryRunner.query(`DROP TABLE "services"`);
    await queryRunner.query(`DROP INDEX "public"."locations_org_created_idx"`);
    await queryRunner.query(`DROP TABLE "locations"`);
    await queryRunner.query(`DROP INDEX "public"."contacts_org_created_idx"`);
    await queryRunner.query(`DROP INDEX "public"."contacts_org_phone_key"`);
    await queryRunner.query(`DROP TABLE "contacts"`);
    await queryRunner.query(`DROP INDEX "public"."phone_numbers_org_created_idx"`);
    await queryRunner.query(`DROP INDEX "public"."phone_numbers_number_key"`);
    await queryRunner.query(`DROP TABLE "phone_numbers"`);
    await queryRunner.query(`DROP INDEX "public"."agents_org_created_idx"`);
    await queryRunner.query(`DROP TABLE "agents"`);
  }
}
