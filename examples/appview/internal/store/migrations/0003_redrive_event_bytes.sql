-- A redriven event is kept byte for byte as Jetstream sent it. jsonb
-- refuses a \u0000 escape and text refuses bytes that are not UTF-8, both of
-- which JSON decoding accepts: one such event could not be queued, and the
-- consumer, retrying the enqueue, stalled on it.
ALTER TABLE redrive ALTER COLUMN event TYPE bytea USING convert_to(event::text, 'UTF8');
