-- Relay.batch (the relay process): the oldest event not relayed (looked up every 10 s), then one
-- transaction: up to 500 events not relayed locked ($1, $2 the outbox range of created_at), matched
-- to endpoints, a tenant's also to its reseller's reseller-wide ones ($1 the events, $2, $3 their
-- span of created_at, $4 the call event types), fanned out to deliveries ($1 new delivery ids, $2
-- events, $3 endpoints, $4 the endpoints' organizations, $5, $6 the span), the webhooks workers
-- notified ($1 the channel, $2 the endpoints), the events marked relayed ($1 the events, $2, $3 the
-- span).
--
-- As Postgres received them for one call placed, dialed, answered and completed, and its events
-- relayed, claimed and attempted: test/sql/hot-statements.test.ts (trailing spaces trimmed).
-- `npm run docs:sql` rewrites this file.

-- OutboxRepository.oldestUnrelayed
SELECT min(created_at) AS oldest, now() FROM call_events WHERE relayed_at IS NULL;

START TRANSACTION;

-- OutboxRepository.lockUnrelayed
SELECT id, created_at, event, trace_parent FROM call_events WHERE relayed_at IS NULL AND created_at >= $1 AND created_at <= $2
        ORDER BY created_at, sequence LIMIT 500 FOR UPDATE SKIP LOCKED;

-- OutboxRepository.matchingEndpoints
SELECT ev.id AS event_id, w.id AS endpoint_id, w.org_id
         FROM call_events ev JOIN webhook_endpoints w ON w.org_id IN (ev.org_id, ev.account_id) AND NOT w.disabled
        WHERE ev.id = ANY($1) AND ev.created_at >= $2 AND ev.created_at <= $3
          AND (w.org_id = ev.org_id
               OR (w.tenant_events = 'all' AND (cardinality(w.tenant_ids) = 0 OR ev.org_id = ANY(w.tenant_ids))
                   AND EXISTS (SELECT 1 FROM organizations r WHERE r.id = w.org_id AND r.is_reseller)))
          AND (ev.event = ANY(w.event_types) OR (cardinality(w.event_types) = 0 AND ev.event = ANY($4::text[])))
          AND (ev.event <> ALL($4::text[]) OR cardinality(w.outcomes) = 0 OR (ev.payload->>'outcome') = ANY(w.outcomes))
        ORDER BY ev.created_at, ev.sequence;

-- OutboxRepository.fanOut
INSERT INTO webhook_deliveries (id, org_id, tenant_id, endpoint_id, event_id, call_id, event, sequence, status, attempt_count, next_attempt_at, created_at)
       SELECT m.id, m.org_id, CASE WHEN ev.account_id <> ev.org_id THEN ev.org_id END, m.endpoint_id, ev.id, ev.call_id, ev.event, ev.sequence, 'pending', 0, now(), ev.created_at
         FROM unnest($1::varchar[], $2::varchar[], $3::varchar[], $4::varchar[]) AS m(id, event_id, endpoint_id, org_id)
         JOIN call_events ev ON ev.id = m.event_id AND ev.created_at >= $5 AND ev.created_at <= $6
       ON CONFLICT (event_id, endpoint_id, created_at) DO NOTHING;

SELECT pg_notify($1, $2);

-- OutboxRepository.markRelayed
UPDATE call_events SET relayed_at = now() WHERE id = ANY($1) AND created_at >= $2 AND created_at <= $3;

COMMIT;
