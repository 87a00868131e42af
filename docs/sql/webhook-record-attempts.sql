-- AttemptsRepository.record (the attempt recorder, a batch at a time). $1-$10 the attempts, column
-- by column (delivery, its created_at, attempt id, time, response status, duration, error, response
-- body, the delivery's new status, its next attempt); $11, $12 the batch's span of created_at; $13
-- the endpoints with a success; $14-$16, $18, $19 those failing (ids, streak start, 410 Gone, last
-- error, the event id should it be disabled); $17 how long a streak disables (seconds). Then, when
-- it disabled endpoints, pauseOrResume ($1 those endpoints).
--
-- As Postgres received them for one call placed, dialed, answered and completed, and its events
-- relayed, claimed and attempted: test/sql/hot-statements.test.ts (trailing spaces trimmed).
-- `npm run docs:sql` rewrites this file.

WITH o AS (
               SELECT * FROM unnest($1::varchar[], $2::timestamptz[], $3::uuid[], $4::timestamptz[], $5::int[], $6::int[], $7::varchar[], $8::varchar[], $9::varchar[], $10::timestamptz[])
                 AS o(delivery_id, delivery_created_at, attempt_id, attempted_at, response_status, duration_ms, error, response_body, status, next_attempt_at)
             ), deliveries AS (
               UPDATE webhook_deliveries d
                  SET status = o.status, attempt_count = d.attempt_count + 1,
                      next_attempt_at = CASE WHEN w.disabled THEN NULL ELSE o.next_attempt_at END,
                      last_response_status = o.response_status, updated_at = now()
                 FROM o, webhook_endpoints w
                WHERE d.id = o.delivery_id AND d.created_at = o.delivery_created_at AND d.created_at >= $11 AND d.created_at <= $12 AND w.id = d.endpoint_id
               RETURNING d.id
             ), attempts AS (
               INSERT INTO webhook_attempts (id, delivery_id, delivery_created_at, attempted_at, response_status, duration_ms, error, response_body)
               SELECT o.attempt_id, o.delivery_id, o.delivery_created_at, o.attempted_at, o.response_status, o.duration_ms, o.error, o.response_body
                 FROM o JOIN deliveries ON deliveries.id = o.delivery_id
             ), recovered AS (
               UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ANY($13::varchar[]) AND failing_since IS NOT NULL
             ), was AS (
               -- Locked in id order, and read as they are once locked (the latest committed state).
               SELECT id, disabled FROM webhook_endpoints WHERE id = ANY($14::varchar[]) ORDER BY id FOR UPDATE
             ), failing AS (
               UPDATE webhook_endpoints w
                  SET failing_since = COALESCE(w.failing_since, f.since),
                      disabled = w.disabled OR f.gone OR COALESCE(w.failing_since, f.since) <= now() - make_interval(secs => $17)
                 FROM unnest($14::varchar[], $15::timestamptz[], $16::bool[], $18::varchar[], $19::varchar[]) AS f(id, since, gone, last_error, event_id), was
                WHERE w.id = f.id AND was.id = f.id
               RETURNING w.id, w.org_id, w.disabled, w.disabled AND NOT was.disabled AS newly, f.gone, f.last_error, f.event_id
             ), events AS (
               INSERT INTO call_events (id, org_id, account_id, event, payload, occurred_at)
          SELECT e.id, e.org_id, COALESCE(o.parent_id, o.id), e.event, jsonb_build_object('event', e.event, 'org_id', e.org_id, 'occurred_at', iso_utc(e.occurred_at)) || e.fields, e.occurred_at
            FROM (SELECT event_id, org_id, 'webhook_endpoint.disabled', jsonb_build_object('endpoint_id', id, 'reason', CASE WHEN gone THEN 'gone' ELSE 'failing' END, 'last_error', last_error), now()
                    FROM failing WHERE newly) AS e(id, org_id, event, fields, occurred_at) JOIN organizations o ON o.id = e.org_id
             )
             SELECT COALESCE(array_agg(id), '{}') AS disabled FROM failing WHERE disabled;

UPDATE webhook_deliveries d SET next_attempt_at = CASE WHEN w.disabled THEN NULL ELSE now() END
       FROM webhook_endpoints w
      WHERE w.id = d.endpoint_id AND d.endpoint_id = ANY($1) AND d.status IN ('pending', 'retrying')
        AND (w.disabled OR d.next_attempt_at IS NULL);
