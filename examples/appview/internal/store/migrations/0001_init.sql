-- Users and communities the AppView knows. Origin columns: NULL means never
-- written, '' means cleared (filter with COALESCE(col, '') <> '').
CREATE TABLE users (
    did             text PRIMARY KEY,
    handle          text NOT NULL,
    pds_url         text NOT NULL DEFAULT '',
    display_name    text NOT NULL DEFAULT '',
    description     text NOT NULL DEFAULT '',
    profile_rev     text NOT NULL DEFAULT '',
    identity_seq    bigint NOT NULL DEFAULT 0,
    account_seq     bigint NOT NULL DEFAULT 0,
    account_status  text NOT NULL DEFAULT '',
    origin          text,
    origin_username text,
    origin_url      text,
    origin_software text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
-- A verified handle names one account; a conflict during a swap is
-- redriven until the incumbent's own identity event lands.
CREATE UNIQUE INDEX users_handle_key ON users (handle) WHERE handle <> 'handle.invalid';
CREATE INDEX users_handle_lower_idx ON users (lower(handle));
CREATE INDEX users_pds_url_idx ON users (pds_url);
-- Not unique: the pair is copied from the bridge.
CREATE INDEX users_origin_username_idx ON users (origin_username, origin);
CREATE INDEX users_origin_username_lower_idx ON users (lower(origin_username), origin);

CREATE TABLE communities (
    did             text PRIMARY KEY,
    handle          text NOT NULL,
    name            text NOT NULL DEFAULT '',
    pds_url         text NOT NULL DEFAULT '',
    display_name    text NOT NULL DEFAULT '',
    description     text NOT NULL DEFAULT '',
    profile_rev     text NOT NULL DEFAULT '',
    identity_seq    bigint NOT NULL DEFAULT 0,
    account_seq     bigint NOT NULL DEFAULT 0,
    account_status  text NOT NULL DEFAULT '',
    origin          text,
    origin_url      text,
    origin_software text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX communities_handle_key ON communities (handle) WHERE handle <> 'handle.invalid';
CREATE INDEX communities_handle_lower_idx ON communities (lower(handle));
CREATE INDEX communities_pds_url_idx ON communities (pds_url);
CREATE INDEX communities_name_origin_idx ON communities (name, origin) WHERE COALESCE(origin, '') <> '';

-- A trivial post index for the author view.
CREATE TABLE posts (
    uri        text PRIMARY KEY,
    did        text NOT NULL,
    rkey       text NOT NULL,
    cid        text NOT NULL DEFAULT '',
    text       text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    indexed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX posts_did_created_idx ON posts (did, created_at DESC, uri DESC);


-- The identity cache table belongs to identity/pgstore (created by its
-- Migrate, which store.Migrate runs after these files).

-- Events to retry. attempts counts spent redrive attempts; dead_at marks a
-- row whose budget is spent (kept for forensics).
CREATE TABLE redrive (
    id         bigserial PRIMARY KEY,
    did        text NOT NULL,
    time_us    bigint NOT NULL,
    kind       text NOT NULL,
    event      jsonb NOT NULL,
    attempts   integer NOT NULL DEFAULT 0,
    next_at    timestamptz NOT NULL,
    last_error text NOT NULL DEFAULT '',
    dead_at    timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (did, time_us)
);
CREATE INDEX redrive_due_idx ON redrive (next_at) WHERE dead_at IS NULL;

-- The Jetstream cursor: time_us of the last event fully processed.
CREATE TABLE jetstream_cursor (
    name       text PRIMARY KEY,
    time_us    bigint NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
