-- DeliveryClaimsRepository.openRange (each dispatcher scan, every 500 ms): the first retained day
-- holding an open delivery. $1 the days' starts, $2 the next days' starts.
--
-- As Postgres received them for one call placed, dialed, answered and completed, and its events
-- relayed, claimed and attempted: test/sql/hot-statements.test.ts (trailing spaces trimmed).
-- `npm run docs:sql` rewrites this file.

SELECT min(day.start) AS since
               FROM unnest($1::timestamptz[], $2::timestamptz[]) AS day(start, next)
              CROSS JOIN LATERAL (
                -- In the order of the index of open deliveries, so that even a day without
                -- statistics yet is probed through it, not read whole.
                SELECT 1 FROM webhook_deliveries d
                 WHERE d.status IN ('pending', 'retrying') AND d.created_at >= day.start AND d.created_at < day.next
                 ORDER BY d.endpoint_id, d.next_attempt_at LIMIT 1
              ) open;
