-- Ordering keys: a job waits while an earlier job with the same key and
-- inbox is still queued. Added to a table an earlier version made, keeping
-- its jobs (they have no key and never wait).
ALTER TABLE {{p}}jobs ADD COLUMN IF NOT EXISTS ordering_key text;
CREATE INDEX IF NOT EXISTS {{n}}jobs_ordering ON {{p}}jobs (ordering_key, inbox, id) WHERE ordering_key IS NOT NULL;
