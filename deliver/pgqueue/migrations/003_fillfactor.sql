-- Room on each page for a claim's new row version: a claim changes only
-- lease_until and token, which no index covers, so with free space on the
-- page Postgres updates the row in place (HOT) instead of adding an entry
-- to every index of the jobs table.
ALTER TABLE {{p}}jobs SET (fillfactor = 70);
