-- DeliveryClaimsRepository.openEndpoints (each dispatcher scan): the endpoints with open
-- deliveries, in id order. $1 the id to start after, $2 how many at most, $3, $4 the open range of
-- created_at.
--
-- As Postgres received them for one call placed, dialed, answered and completed, and its events
-- relayed, claimed and attempted: test/sql/hot-statements.test.ts (trailing spaces trimmed).
-- `npm run docs:sql` rewrites this file.

WITH RECURSIVE e(endpoint_id, n) AS (
               (SELECT endpoint_id, 1 FROM webhook_deliveries
                 WHERE status IN ('pending', 'retrying') AND endpoint_id > $1 AND created_at >= $3 AND created_at <= $4
                 ORDER BY endpoint_id LIMIT 1)
               UNION ALL
               SELECT (SELECT d.endpoint_id FROM webhook_deliveries d
                        WHERE d.status IN ('pending', 'retrying') AND d.endpoint_id > e.endpoint_id AND d.created_at >= $3 AND d.created_at <= $4
                        ORDER BY d.endpoint_id LIMIT 1), e.n + 1
                 FROM e WHERE e.endpoint_id IS NOT NULL AND e.n < $2
             )
             SELECT e.endpoint_id AS id, w.rate_limit_per_second IS NOT NULL AS paced
               FROM e JOIN webhook_endpoints w ON w.id = e.endpoint_id ORDER BY e.endpoint_id;
