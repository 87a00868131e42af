-- DeliveryClaimsRepository.claimPaced: the dispatcher's claim of due deliveries of rate-limited
-- endpoints, with their send slots. $1 the endpoints, $2 each one's quota, $3 the lease in seconds,
-- $4, $5 the open range of created_at, $6 the pacing horizon in seconds, $7 the seconds that rate
-- successive slots span (1.05: one second plus the 50 ms a send may run late).
--
-- As Postgres received them for one call placed, dialed, answered and completed, and its events
-- relayed, claimed and attempted: test/sql/hot-statements.test.ts (trailing spaces trimmed).
-- `npm run docs:sql` rewrites this file.

WITH paced AS (
    SELECT w.id, want.quota, $7::float8 / w.rate_limit_per_second AS spacing, greatest(w.paced_until, now()) AS start
      FROM unnest($1::varchar[], $2::int[]) AS want(endpoint_id, quota)
      JOIN webhook_endpoints w ON w.id = want.endpoint_id AND NOT w.disabled AND w.rate_limit_per_second IS NOT NULL
       FOR UPDATE OF w SKIP LOCKED
  ), mine AS (
    SELECT due.id, due.created_at,
           p.start + make_interval(secs => (row_number() OVER (PARTITION BY p.id ORDER BY due.next_attempt_at) - 1) * p.spacing) AS send_at
      FROM paced p CROSS JOIN LATERAL (
        SELECT d.id, d.created_at, d.next_attempt_at FROM webhook_deliveries d
         WHERE d.endpoint_id = p.id AND d.status IN ('pending', 'retrying') AND d.next_attempt_at <= now() AND d.created_at >= $4 AND d.created_at <= $5
         ORDER BY d.next_attempt_at
         -- The slots that start within the horizon.
         LIMIT least(p.quota, greatest(0, ceil(extract(epoch FROM now() + make_interval(secs => $6) - p.start) / p.spacing)))::int
         FOR UPDATE OF d SKIP LOCKED
      ) due
  ), claimed AS (
    UPDATE webhook_deliveries d SET next_attempt_at = now() + make_interval(secs => $3)
      FROM mine WHERE d.id = mine.id AND d.created_at = mine.created_at AND d.created_at >= $4 AND d.created_at <= $5
    RETURNING d.id, d.endpoint_id, d.event_id, d.attempt_count, d.created_at, mine.send_at
  ), paced_on AS (
    UPDATE webhook_endpoints w SET paced_until = p.start + make_interval(secs => taken.n * p.spacing)
      FROM paced p CROSS JOIN LATERAL (SELECT count(*) AS n FROM claimed c WHERE c.endpoint_id = p.id) taken
     WHERE w.id = p.id AND taken.n > 0
  )
  SELECT c.id AS delivery_id, c.attempt_count, c.endpoint_id, c.created_at,
         ceil(extract(epoch FROM c.send_at - clock_timestamp()) * 1000)::int AS wait_ms, w.url, w.secret, w.field_aliases, w.extra_payload, w.custom_headers, ev.payload, ev.trace_parent, CASE WHEN ev.account_id <> ev.org_id THEN ev.org_id END AS tenant_id,
  CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret END AS previous_secret,
  CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_expires_at END AS previous_secret_expires_at
    FROM claimed c JOIN webhook_endpoints w ON w.id = c.endpoint_id
    JOIN call_events ev ON ev.id = c.event_id AND ev.created_at = c.created_at AND ev.created_at >= $4 AND ev.created_at <= $5;
