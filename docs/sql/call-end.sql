-- CallEngine.end ends calls in one transaction (here, the carrier's report of a completed call).
-- The calls locked, then those still queued ($1 the calls); the organizations and payers ($1...
-- their ids, a parameter each); the ending with each call.completed event ($1 the calls, $2 times,
-- $3 event ids, $4 statuses, $5 end reasons, $6 durations, $7 charges, $8 billable amounts); the
-- charge (one ledger line, $1-$7 its columns); the balance.low rule ($1 the payers).
--
-- As Postgres received them for one call placed, dialed, answered and completed, and its events
-- relayed, claimed and attempted: test/sql/hot-statements.test.ts (trailing spaces trimmed).
-- `npm run docs:sql` rewrites this file.

START TRANSACTION;

-- CallsRepository.lockOpen
SELECT id, status, started_at, org_id, payer_org_id FROM calls WHERE id = ANY($1) AND status NOT IN ('completed', 'no_answer', 'busy', 'failed', 'canceled') ORDER BY id FOR UPDATE;

-- CallsRepository.catchUpRinging
SELECT id, dialed_at FROM calls WHERE id = ANY($1) AND status = 'queued';

-- OrganizationsRepository.byIds
SELECT "Organization"."id" AS "Organization_id", "Organization"."name" AS "Organization_name", "Organization"."timezone" AS "Organization_timezone", "Organization"."industry" AS "Organization_industry", "Organization"."external_ref" AS "Organization_external_ref", "Organization"."parent_id" AS "Organization_parent_id", "Organization"."is_reseller" AS "Organization_is_reseller", "Organization"."tenant_limit" AS "Organization_tenant_limit", "Organization"."max_concurrent_calls" AS "Organization_max_concurrent_calls", "Organization"."max_calls_per_hour" AS "Organization_max_calls_per_hour", "Organization"."rate_per_minute_micros" AS "Organization_rate_per_minute_micros", "Organization"."rate_per_text_micros" AS "Organization_rate_per_text_micros", "Organization"."resale_per_minute_micros" AS "Organization_resale_per_minute_micros", "Organization"."resale_per_text_micros" AS "Organization_resale_per_text_micros", "Organization"."monthly_spend_limit_micros" AS "Organization_monthly_spend_limit_micros", "Organization"."currency" AS "Organization_currency", "Organization"."balance_micros" AS "Organization_balance_micros", "Organization"."low_balance_threshold_micros" AS "Organization_low_balance_threshold_micros", "Organization"."low_balance_notified" AS "Organization_low_balance_notified", "Organization"."disabled" AS "Organization_disabled", "Organization"."disabled_at" AS "Organization_disabled_at", "Organization"."sms_sender" AS "Organization_sms_sender", "Organization"."carrier_provider" AS "Organization_carrier_provider", "Organization"."booking_page_enabled" AS "Organization_booking_page_enabled", "Organization"."booking_page_headline" AS "Organization_booking_page_headline", "Organization"."created_at" AS "Organization_created_at" FROM "organizations" "Organization" WHERE (("Organization"."id" IN ($1)));

-- CallsRepository.markEnded
WITH input AS (SELECT * FROM unnest($1::varchar[], $2::timestamptz[], $3::varchar[], $4::varchar[], $5::varchar[], $6::int[], $7::bigint[], $8::bigint[]) AS input(id, at, event_id, status, end_reason, duration_seconds, charge_micros, billable_micros)),
            i AS (SELECT input.* FROM input JOIN calls c ON c.id = input.id WHERE c.status NOT IN ('completed', 'no_answer', 'busy', 'failed', 'canceled') ORDER BY c.id FOR NO KEY UPDATE OF c),
            changed AS (UPDATE calls c SET status = i.status, end_reason = i.end_reason, duration_seconds = i.duration_seconds, charge_micros = i.charge_micros,
       billable_micros = i.billable_micros, ended_at = i.at,
       outcome = CASE i.status WHEN 'completed' THEN c.simulate->>'outcome' WHEN 'canceled' THEN NULL ELSE 'unreachable' END, last_sequence = c.last_sequence + 1, updated_at = now()
                          FROM i WHERE c.id = i.id
                        RETURNING c AS row, i.at, i.event_id)
       INSERT INTO call_events (id, call_id, org_id, account_id, sequence, event, payload, occurred_at, trace_parent, created_at)
       SELECT ch.event_id, (ch.row).id, (ch.row).org_id, (ch.row).payer_org_id, (ch.row).last_sequence, 'call.completed', call_event_payload(ch.row, 'call.completed', ch.at), ch.at,
              (ch.row).trace_parent, clock_timestamp()
         FROM changed ch
       RETURNING call_id, payload;

-- LedgerRepository.append
INSERT INTO ledger_entries (id, org_id, subject_org_id, kind, amount_micros, reference, description)
  SELECT * FROM unnest($1::varchar[], $2::varchar[], $3::varchar[], $4::varchar[], $5::bigint[], $6::varchar[], $7::varchar[]);

-- LedgerRepository.reportLowBalances
UPDATE organizations o SET low_balance_notified = NOT o.low_balance_notified
   WHERE o.id = ANY($1) AND o.low_balance_notified <> COALESCE(o.balance_micros < o.low_balance_threshold_micros, false)
   RETURNING o.id, o.low_balance_notified AS low, o.balance_micros, o.low_balance_threshold_micros AS threshold_micros, o.currency;

COMMIT;
