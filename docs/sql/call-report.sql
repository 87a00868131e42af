-- CallEngine.applyReport (the calls worker's report job): the carrier reports ringing, then the
-- answer (its report of the end: call-end.sql). Each status change is one statement that locks the
-- calls by id, changes them and writes their events: $1 the calls, $2 each one's time, $3 each
-- one's event id. The answer first catches up calls still queued ($1 the calls).
--
-- As Postgres received them for one call placed, dialed, answered and completed, and its events
-- relayed, claimed and attempted: test/sql/hot-statements.test.ts (trailing spaces trimmed).
-- `npm run docs:sql` rewrites this file.

-- CallsRepository.markRinging
WITH input AS (SELECT * FROM unnest($1::varchar[], $2::timestamptz[], $3::varchar[]) AS input(id, at, event_id)),
            i AS (SELECT input.* FROM input JOIN calls c ON c.id = input.id WHERE c.status = 'queued' ORDER BY c.id FOR NO KEY UPDATE OF c),
            changed AS (UPDATE calls c SET status = 'ringing', last_sequence = c.last_sequence + 1, updated_at = now()
                          FROM i WHERE c.id = i.id
                        RETURNING c AS row, i.at, i.event_id)
       INSERT INTO call_events (id, call_id, org_id, account_id, sequence, event, payload, occurred_at, trace_parent, created_at)
       SELECT ch.event_id, (ch.row).id, (ch.row).org_id, (ch.row).payer_org_id, (ch.row).last_sequence, 'call.ringing', call_event_payload(ch.row, 'call.ringing', ch.at), ch.at,
              (ch.row).trace_parent, clock_timestamp()
         FROM changed ch
       RETURNING call_id, payload;

-- CallsRepository.catchUpRinging
SELECT id, dialed_at FROM calls WHERE id = ANY($1) AND status = 'queued';

-- CallsRepository.markInProgress
WITH input AS (SELECT * FROM unnest($1::varchar[], $2::timestamptz[], $3::varchar[]) AS input(id, at, event_id)),
            i AS (SELECT input.* FROM input JOIN calls c ON c.id = input.id WHERE c.status = 'ringing' ORDER BY c.id FOR NO KEY UPDATE OF c),
            changed AS (UPDATE calls c SET status = 'in_progress', started_at = i.at, last_sequence = c.last_sequence + 1, updated_at = now()
                          FROM i WHERE c.id = i.id
                        RETURNING c AS row, i.at, i.event_id)
       INSERT INTO call_events (id, call_id, org_id, account_id, sequence, event, payload, occurred_at, trace_parent, created_at)
       SELECT ch.event_id, (ch.row).id, (ch.row).org_id, (ch.row).payer_org_id, (ch.row).last_sequence, 'call.in_progress', call_event_payload(ch.row, 'call.in_progress', ch.at), ch.at,
              (ch.row).trace_parent, clock_timestamp()
         FROM changed ch
       RETURNING call_id, payload;
