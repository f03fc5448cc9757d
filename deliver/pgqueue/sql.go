package pgqueue

import (
	"strconv"
	"strings"
)

// statements holds the queue's SQL with its table names filled in.
type statements struct {
	insertActivity, insertJobs, claim, selectActivities, finish, finishDone string
	status, drop, dropActivities, sweep, nextDue, depth                     string
}

func (q *Queue) prepareSQL() statements {
	shards := strconv.Itoa(counterShards)
	r := func(sql string) string { return strings.ReplaceAll(q.render(sql), "{{shards}}", shards) }
	return statements{
		insertActivity: r(`INSERT INTO {{p}}activities
			(key_id, activity_id, actor_id, tag, body, deadline, max_attempts, sync_collection, enqueued_at, trace_parent)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`),
		insertJobs: r(`INSERT INTO {{p}}jobs (activity, inbox, lane, due_at, ordering_key)
			SELECT $1, i, $3, $4, $5 FROM unnest($2::text[]) WITH ORDINALITY AS t(i, n) ORDER BY n`),
		// A keyed job waits while an earlier job with its key and inbox is
		// in the table in any state: claimed, retrying or due.
		// The candidates are picked in an array subquery so that the plan
		// does not depend on LIMIT's value: query runs it as a generic plan,
		// skipping a fresh plan per claim, and the update then finds its rows
		// by primary key whatever the limit.
		claim: r(`UPDATE {{p}}jobs j SET lease_until = $2, token = j.token + 1
			WHERE j.id = ANY(ARRAY(
				SELECT c.id FROM {{p}}jobs c
				WHERE c.due_at <= $1
				  AND (c.lease_until IS NULL OR c.lease_until <= $1)
				  AND (c.ordering_key IS NULL OR NOT EXISTS (
					SELECT 1 FROM {{p}}jobs e
					WHERE e.ordering_key = c.ordering_key AND e.inbox = c.inbox AND e.id < c.id))
				ORDER BY c.lane, c.due_at, c.id
				LIMIT $3
				FOR UPDATE SKIP LOCKED))
			RETURNING j.id, j.token, j.activity, j.inbox, j.attempts, j.lane, j.ordering_key, j.due_at`),
		selectActivities: r(`SELECT id, key_id, activity_id, actor_id, tag, body, deadline, max_attempts,
			sync_collection, enqueued_at, trace_parent FROM {{p}}activities WHERE id = ANY($1)`),
		// One statement records a batch of outcomes. Each row is fenced by
		// its token; a pending outcome that used up the send's attempts is
		// given up here, and a retry is never due after the send's deadline,
		// so both limits hold whatever the worker does. A statement adds to
		// one counter row per tag, the shard of its connection: a batch
		// locks and rewrites one row, not one per job, and connections
		// finishing the same tag at once mostly touch different rows.
		finish: r(`WITH input AS (
				SELECT i.id, i.token, a.tag, a.deadline, i.retry_at, i.attempts,
					CASE WHEN i.result = 0 AND a.max_attempts > 0 AND i.attempts >= a.max_attempts
						THEN 3 ELSE i.result END AS result
				FROM unnest($1::bigint[], $2::bigint[], $3::smallint[], $4::timestamptz[], $5::integer[])
					AS i(id, token, result, retry_at, attempts)
				JOIN {{p}}jobs j ON j.id = i.id AND j.token = i.token
				JOIN {{p}}activities a ON a.id = j.activity
			), upd AS (
				UPDATE {{p}}jobs j SET
					due_at = CASE WHEN i.deadline IS NOT NULL AND i.deadline < i.retry_at THEN i.deadline ELSE i.retry_at END,
					attempts = i.attempts, lease_until = NULL, token = j.token + 1
				FROM input i WHERE j.id = i.id AND j.token = i.token AND i.result = 0
				RETURNING j.id
			), del AS (
				DELETE FROM {{p}}jobs j USING input i
				WHERE j.id = i.id AND j.token = i.token AND i.result <> 0
				RETURNING j.id, i.tag, i.result
			), cnt AS (
				INSERT INTO {{p}}counts AS c (tag, shard, delivered, failed, gave_up, skipped)
				SELECT tag, pg_backend_pid() % {{shards}},
					count(*) FILTER (WHERE result = 1), count(*) FILTER (WHERE result = 2),
					count(*) FILTER (WHERE result = 3), count(*) FILTER (WHERE result = 4)
				FROM del GROUP BY 1 ORDER BY 1
				ON CONFLICT (tag, shard) DO UPDATE SET
					delivered = c.delivered + excluded.delivered, failed = c.failed + excluded.failed,
					gave_up = c.gave_up + excluded.gave_up, skipped = c.skipped + excluded.skipped
			)
			SELECT id FROM upd UNION ALL SELECT id FROM del`),
		// finishDone is finish for a batch of settled outcomes only, the
		// usual case: no retry to schedule and no attempts to check, so a
		// plan with less to set up on every call.
		finishDone: r(`WITH del AS (
				DELETE FROM {{p}}jobs j
				USING unnest($1::bigint[], $2::bigint[], $3::smallint[]) AS i(id, token, result)
				WHERE j.id = i.id AND j.token = i.token
				RETURNING j.id, j.activity, i.result
			), cnt AS (
				INSERT INTO {{p}}counts AS c (tag, shard, delivered, failed, gave_up, skipped)
				SELECT a.tag, pg_backend_pid() % {{shards}},
					count(*) FILTER (WHERE d.result = 1), count(*) FILTER (WHERE d.result = 2),
					count(*) FILTER (WHERE d.result = 3), count(*) FILTER (WHERE d.result = 4)
				FROM del d JOIN {{p}}activities a ON a.id = d.activity GROUP BY 1 ORDER BY 1
				ON CONFLICT (tag, shard) DO UPDATE SET
					delivered = c.delivered + excluded.delivered, failed = c.failed + excluded.failed,
					gave_up = c.gave_up + excluded.gave_up, skipped = c.skipped + excluded.skipped
			)
			SELECT id FROM del`),
		status: r(`SELECT
				(SELECT count(*) FROM {{p}}jobs j JOIN {{p}}activities a ON a.id = j.activity WHERE a.tag = $1),
				coalesce(sum(delivered), 0)::bigint, coalesce(sum(failed), 0)::bigint,
				coalesce(sum(gave_up), 0)::bigint, coalesce(sum(skipped), 0)::bigint,
				coalesce(sum(dropped), 0)::bigint
			FROM {{p}}counts WHERE tag = $1`),
		drop: r(`WITH d AS (
				DELETE FROM {{p}}jobs j USING {{p}}activities a
				WHERE j.activity = a.id
				  AND ($1::text = '' OR a.activity_id = $1) AND ($2::text = '' OR a.actor_id = $2)
				  AND ($3::text = '' OR a.tag = $3)
				RETURNING j.id, a.tag
			), cnt AS (
				INSERT INTO {{p}}counts AS c (tag, shard, dropped)
				SELECT tag, (id % {{shards}})::integer, count(*) FROM d GROUP BY 1, 2 ORDER BY 1, 2
				ON CONFLICT (tag, shard) DO UPDATE SET dropped = c.dropped + excluded.dropped
			)
			SELECT count(*) FROM d`),
		dropActivities: r(`DELETE FROM {{p}}activities a
			WHERE ($1::text = '' OR a.activity_id = $1) AND ($2::text = '' OR a.actor_id = $2)
			  AND ($3::text = '' OR a.tag = $3)
			  AND NOT EXISTS (SELECT 1 FROM {{p}}jobs j WHERE j.activity = a.id)`),
		sweep: r(`DELETE FROM {{p}}activities WHERE id IN (
			SELECT a.id FROM {{p}}activities a
			WHERE NOT EXISTS (SELECT 1 FROM {{p}}jobs j WHERE j.activity = a.id)
			LIMIT 10000)`),
		// Every job counts, claimed or waiting for a retry, as Status counts
		// Pending; the claim index (lane, due_at, id) answers it.
		depth: r(`SELECT lane, count(*) FROM {{p}}jobs GROUP BY lane`),
		// The earliest job coming due after $1, lane by lane so each probe
		// is one step down the claim index.
		nextDue: r(`SELECT least(
				(SELECT due_at FROM {{p}}jobs WHERE lane = -1 AND due_at > $1 ORDER BY due_at LIMIT 1),
				(SELECT due_at FROM {{p}}jobs WHERE lane = 0 AND due_at > $1 ORDER BY due_at LIMIT 1),
				(SELECT due_at FROM {{p}}jobs WHERE lane = 1 AND due_at > $1 ORDER BY due_at LIMIT 1))`),
	}
}
