-- The first version: one row per send, one per inbox, and per-tag counters.
CREATE TABLE IF NOT EXISTS {{p}}activities (
    id              bigserial   PRIMARY KEY,
    key_id          text        NOT NULL,
    activity_id     text        NOT NULL DEFAULT '',
    actor_id        text        NOT NULL DEFAULT '',
    tag             text        NOT NULL DEFAULT '',
    body            bytea       NOT NULL,
    deadline        timestamptz,
    max_attempts    integer     NOT NULL DEFAULT 0,
    sync_collection boolean     NOT NULL DEFAULT false,
    enqueued_at     timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS {{n}}activities_activity_id ON {{p}}activities (activity_id) WHERE activity_id <> '';
CREATE INDEX IF NOT EXISTS {{n}}activities_actor_id ON {{p}}activities (actor_id) WHERE actor_id <> '';
CREATE INDEX IF NOT EXISTS {{n}}activities_tag ON {{p}}activities (tag);

CREATE TABLE IF NOT EXISTS {{p}}jobs (
    id          bigserial   PRIMARY KEY,
    activity    bigint      NOT NULL REFERENCES {{p}}activities (id) ON DELETE CASCADE,
    inbox       text        NOT NULL,
    lane        smallint    NOT NULL DEFAULT 0,
    due_at      timestamptz NOT NULL,
    attempts    integer     NOT NULL DEFAULT 0,
    lease_until timestamptz,
    token       bigint      NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS {{n}}jobs_claim ON {{p}}jobs (lane, due_at, id);
CREATE INDEX IF NOT EXISTS {{n}}jobs_activity ON {{p}}jobs (activity);

-- Counters are sharded by job id so that finishing a large batch does not
-- queue every worker behind one row lock.
CREATE TABLE IF NOT EXISTS {{p}}counts (
    tag       text    NOT NULL,
    shard     integer NOT NULL,
    delivered bigint  NOT NULL DEFAULT 0,
    failed    bigint  NOT NULL DEFAULT 0,
    gave_up   bigint  NOT NULL DEFAULT 0,
    skipped   bigint  NOT NULL DEFAULT 0,
    dropped   bigint  NOT NULL DEFAULT 0,
    PRIMARY KEY (tag, shard)
);
