package fetch_test

import (
	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/sig/inbox"
)

// What sig/inbox asks of the fetching side, which fetch provides.
var (
	_ inbox.KeyRefetcher = (*fetch.KeyResolver)(nil)
	_ inbox.Refetcher    = (*fetch.Fetcher)(nil)
)
