-- DeliveryClaimsRepository.claimDue: the dispatcher's claim of due deliveries of endpoints without
-- a rate limit. $1 the endpoints, $2 each one's quota, $3 the lease in seconds, $4, $5 the open
-- range of created_at.
--
-- As Postgres received them for one call placed, dialed, answered and completed, and its events
-- relayed, claimed and attempted: test/sql/hot-statements.test.ts (trailing spaces trimmed).
-- `npm run docs:sql` rewrites this file.

WITH mine AS (
    SELECT due.id, due.created_at, NULL::timestamptz AS send_at FROM unnest($1::varchar[], $2::int[]) AS want(endpoint_id, quota)
      JOIN webhook_endpoints w ON w.id = want.endpoint_id AND NOT w.disabled AND w.rate_limit_per_second IS NULL
      CROSS JOIN LATERAL (
        SELECT d.id, d.created_at FROM webhook_deliveries d
         WHERE d.endpoint_id = want.endpoint_id AND d.status IN ('pending', 'retrying') AND d.next_attempt_at <= now() AND d.created_at >= $4 AND d.created_at <= $5
         ORDER BY d.next_attempt_at LIMIT want.quota
         FOR UPDATE OF d SKIP LOCKED
      ) due
  ), claimed AS (
    UPDATE webhook_deliveries d SET next_attempt_at = now() + make_interval(secs => $3)
      FROM mine WHERE d.id = mine.id AND d.created_at = mine.created_at AND d.created_at >= $4 AND d.created_at <= $5
    RETURNING d.id, d.endpoint_id, d.event_id, d.attempt_count, d.created_at, mine.send_at
  )
  SELECT c.id AS delivery_id, c.attempt_count, c.endpoint_id, c.created_at,
         ceil(extract(epoch FROM c.send_at - clock_timestamp()) * 1000)::int AS wait_ms, w.url, w.secret, w.field_aliases, w.extra_payload, w.custom_headers, ev.payload, ev.trace_parent, CASE WHEN ev.account_id <> ev.org_id THEN ev.org_id END AS tenant_id,
  CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret END AS previous_secret,
  CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_expires_at END AS previous_secret_expires_at
    FROM claimed c JOIN webhook_endpoints w ON w.id = c.endpoint_id
    JOIN call_events ev ON ev.id = c.event_id AND ev.created_at = c.created_at AND ev.created_at >= $4 AND ev.created_at <= $5;
