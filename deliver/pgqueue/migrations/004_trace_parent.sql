-- Trace context: the W3C traceparent of the span that queued a send, so
-- each delivery attempt's span links to it across processes. Added to a
-- table an earlier version made; its sends have none.
ALTER TABLE {{p}}activities ADD COLUMN IF NOT EXISTS trace_parent text NOT NULL DEFAULT '';
