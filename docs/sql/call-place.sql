-- POST /v1/calls places a call in one statement (CallsRepository.placeOutbound). $1 the
-- organization, $2 the agent, $3 the contact, $4 the campaign (null: none), $5 the new call's id,
-- $6 the simulated script, $7 its created_at, $8 its call.queued event's id, $9 and $10 the bounds
-- of the calendar month whose charges a tenant's monthly spend limit caps (read only for a tenant
-- with one).
--
-- As Postgres received them for one call placed, dialed, answered and completed, and its events
-- relayed, claimed and attempted: test/sql/hot-statements.test.ts (trailing spaces trimmed).
-- `npm run docs:sql` rewrites this file.

WITH ctx AS (
         SELECT o.id AS org_id, p.id AS payer_id, p.currency, p.balance_micros > 0 AS funded, a.id AS agent_id, ct.id AS contact_id, ct.phone_number,
                (SELECT n.phone_number FROM phone_numbers n WHERE n.org_id = o.id AND n.agent_id = a.id ORDER BY n.created_at, n.id LIMIT 1) AS our_number,
                ($4::varchar IS NULL OR EXISTS (SELECT 1 FROM campaigns k WHERE k.id = $4 AND k.org_id = o.id)) AS campaign_found,
                CASE WHEN o.monthly_spend_limit_micros IS NULL THEN false
        ELSE ((SELECT COALESCE(sum(b.call_charges_micros + b.other_charges_micros), 0) FROM usage_buckets b
             WHERE b.org_id = o.id AND b.hour >= $9::timestamptz AND b.hour < GREATEST($9::timestamptz, LEAST(COALESCE(date_trunc('hour', (SELECT rolled_until FROM usage_watermark WHERE id = 1), 'UTC'), $9::timestamptz), $10::timestamptz)))
         - (SELECT COALESCE(sum(l.amount_micros), 0) FROM ledger_entries l
             WHERE l.subject_org_id = o.id AND l.created_at >= GREATEST($9::timestamptz, LEAST(COALESCE(date_trunc('hour', (SELECT rolled_until FROM usage_watermark WHERE id = 1), 'UTC'), $9::timestamptz), $10::timestamptz)) AND l.created_at < $10::timestamptz AND l.kind <> 'adjustment')) >= o.monthly_spend_limit_micros END AS spend_limit_reached
           FROM organizations o
           JOIN organizations p ON p.id = COALESCE(o.parent_id, o.id)
           LEFT JOIN agents a ON a.id = $2 AND a.org_id = o.id
           LEFT JOIN contacts ct ON ct.id = $3 AND ct.org_id = o.id
          WHERE o.id = $1),
       inserted AS (
         INSERT INTO calls AS c (id, org_id, payer_org_id, agent_id, contact_id, campaign_id, direction, status, phone_number, our_number, simulate, last_sequence, created_at, updated_at, trace_parent)
         SELECT $5, org_id, payer_id, agent_id, contact_id, $4, 'outbound', 'queued', phone_number, our_number, $6, 1, $7, $7, $11
           FROM ctx WHERE agent_id IS NOT NULL AND contact_id IS NOT NULL AND campaign_found AND funded AND NOT spend_limit_reached
         RETURNING c),
       event AS (
  INSERT INTO call_events (id, call_id, org_id, account_id, sequence, event, payload, occurred_at, trace_parent)
  SELECT $8, (ins.c).id, (ins.c).org_id, (ins.c).payer_org_id, 1, 'call.queued', call_event_payload(ins.c, 'call.queued', $7), $7, (ins.c).trace_parent
    FROM inserted ins)
       SELECT ctx.*, EXISTS (SELECT 1 FROM inserted) AS placed FROM ctx;
