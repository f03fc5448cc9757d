package fetch

import "context"

// Refetch fetches id as Lookup does, without looking for an alternate in a
// web page, and returns the document's JSON only when the copy its origin
// serves has exactly that id: for an inbox that trusts a forwarded activity
// only as its own origin serves it (sig/inbox.Refetcher).
func (f *Fetcher) Refetch(ctx context.Context, id string) ([]byte, error) {
	d, err := f.lookup(ctx, id, false)
	if err != nil {
		return nil, err
	}
	if d.ID != id {
		return nil, idMismatch(d.URL.String(), d.ID)
	}
	return d.Raw, nil
}
