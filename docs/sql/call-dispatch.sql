-- CallEngine.dispatch (the calls worker's dispatch job) admits the waiting calls of every
-- organization whose dispatch was requested, each within its limits (in Redis), and dials them as
-- one batch (CallEngine.dial). The organizations' limits, their resellers' ceilings, their carriers
-- and whether each has a monthly spend limit ($1 their ids); the calls to a number on a do-not-call
-- list, then the calls locked by id and marked dialed, with one dial time for the batch ($1 the
-- calls). (A tenant with a spend limit: its calls locked, its row locked, and its calls marked
-- dialed only while its month's charges are below the limit, in one transaction:
-- src/tenants/spend-limit.ts.)
--
-- As Postgres received them for one call placed, dialed, answered and completed, and its events
-- relayed, claimed and attempted: test/sql/hot-statements.test.ts (trailing spaces trimmed).
-- `npm run docs:sql` rewrites this file.

-- OrganizationsRepository.dialingOf
SELECT o.id, o.disabled, o.max_concurrent_calls, o.max_calls_per_hour, o.carrier_provider,
              p.max_concurrent_calls AS parent_max_concurrent_calls, p.max_calls_per_hour AS parent_max_calls_per_hour,
              o.monthly_spend_limit_micros IS NOT NULL AS spend_limited
         FROM organizations o LEFT JOIN organizations p ON p.id = o.parent_id
        WHERE o.id = ANY($1);

-- CallsRepository.barredAmong
SELECT c.id, c.org_id FROM calls c
        WHERE c.id = ANY($1) AND c.direction = 'outbound' AND c.status = 'queued' AND c.dialed_at IS NULL
          AND EXISTS (SELECT 1 FROM do_not_call_entries dnc
            WHERE dnc.phone_number = c.phone_number
              AND dnc.org_id IN (c.org_id, (SELECT o.parent_id FROM organizations o WHERE o.id = c.org_id)));

-- CallsRepository.markDialed
WITH locked AS (SELECT id, org_id FROM calls WHERE id = ANY($1) AND status NOT IN ('completed', 'no_answer', 'busy', 'failed', 'canceled') ORDER BY id FOR NO KEY UPDATE),
       tenants AS MATERIALIZED (
         SELECT o.id, o.disabled FROM organizations o WHERE o.id IN (SELECT org_id FROM locked) AND o.parent_id IS NOT NULL ORDER BY o.id FOR SHARE),
       dial AS MATERIALIZED (SELECT clock_timestamp() AS at FROM (SELECT count(*) FROM locked) c, (SELECT count(*) FROM tenants) t)
       UPDATE calls c SET dialed_at = COALESCE(c.dialed_at, dial.at), updated_at = now()
         FROM locked, dial WHERE c.id = locked.id
          AND (c.dialed_at IS NOT NULL OR NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = c.org_id AND t.disabled))
       RETURNING c.id, c.org_id, c.dialed_at, c.phone_number, c.our_number, c.simulate;
