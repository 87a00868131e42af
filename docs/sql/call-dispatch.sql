-- CallEngine.dispatch (the calls worker's dispatch job) admits an organization's waiting calls
-- within its limits (in Redis) and dials them (CallEngine.dial). The organization with its reseller
-- ($1 its id); the calls to a number on a do-not-call list, then the calls marked dialed ($1 the
-- calls); the organization's carrier ($1 its id).
--
-- As Postgres received them for one call placed, dialed, answered and completed, and its events
-- relayed, claimed and attempted: test/sql/hot-statements.test.ts (trailing spaces trimmed).
-- `npm run docs:sql` rewrites this file.

SELECT o.disabled, o.max_concurrent_calls, o.max_calls_per_hour, o.carrier_provider,
              p.max_concurrent_calls AS parent_max_concurrent_calls, p.max_calls_per_hour AS parent_max_calls_per_hour
         FROM organizations o LEFT JOIN organizations p ON p.id = o.parent_id
        WHERE o.id = $1;

-- CallsRepository.barredAmong
SELECT c.id, c.org_id FROM calls c
        WHERE c.id = ANY($1) AND c.direction = 'outbound' AND c.status = 'queued' AND c.dialed_at IS NULL
          AND EXISTS (SELECT 1 FROM do_not_call_entries dnc
            WHERE dnc.phone_number = c.phone_number
              AND dnc.org_id IN (c.org_id, (SELECT o.parent_id FROM organizations o WHERE o.id = c.org_id)));

-- CallsRepository.markDialed
UPDATE calls SET dialed_at = COALESCE(dialed_at, now()), updated_at = now()
        WHERE id = ANY($1) AND status NOT IN ('completed', 'no_answer', 'busy', 'failed', 'canceled')
        RETURNING id, org_id, dialed_at, phone_number, our_number, simulate;
