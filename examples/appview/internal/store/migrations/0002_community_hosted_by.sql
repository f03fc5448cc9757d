-- A community's hosted-by claim: the DID of the instance that hosts it, as
-- its profile record asserted it and the AppView verified it ('' when none
-- or refused). Identity refreshes re-check it against a new handle.
ALTER TABLE communities ADD COLUMN hosted_by_did text NOT NULL DEFAULT '';
