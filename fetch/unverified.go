package fetch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
)

// UnverifiedJSON fetches any JSON object a 200 serves, signed as Lookup
// signs, without the id, author or content-type checks, for applications
// that read a collection by rules of their own. A status other than 200 is
// a *StatusError (errors.Is ErrTemporary, ErrNotFound, ErrGone tell the
// cases apart). It returns the object and the URL it was finally served from.
func (f *Fetcher) UnverifiedJSON(ctx context.Context, rawURL string) (map[string]any, *url.URL, error) {
	resp, err := f.get(ctx, rawURL, getOpts{accept: AcceptActivityPub, sign: true, max: f.cfg.MaxDocumentBytes})
	if err != nil {
		return nil, nil, err
	}
	if resp.status != 200 {
		return nil, nil, f.statusError(resp)
	}
	var m map[string]any
	if err := json.Unmarshal(resp.body, &m); err != nil || m == nil {
		return nil, nil, fmt.Errorf("%w: not a JSON object", ErrMalformed)
	}
	return m, resp.url, nil
}
