package deliver

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/fedkit/fedkit/client"
)

func (d *Deliverer) permanent(ctx context.Context, keyID string, status int) bool {
	if d.cfg.Permanent(status) {
		return true
	}
	if !slices.Contains(d.cfg.PermanentIfSenderGone, status) {
		return false
	}
	gone, err := d.keys.Gone(ctx, keyID)
	if err != nil {
		d.log.Warn("deliver: SenderKeys.Gone failed", "key_id", keyID, "err", err)
	}
	return gone
}

// unsent reports errors of the guard refusing a request before it was
// sent: nothing about the host's health.
func unsent(err error) bool {
	return errors.Is(err, client.ErrBlocked) || errors.Is(err, client.ErrInvalidURL) || errors.Is(err, client.ErrHiddenService)
}

// permanentSendError reports errors that no retry can mend: the guard
// refusing the address or URL, or a redirect, which a POST never follows.
func permanentSendError(err error) bool {
	return unsent(err) || errors.Is(err, client.ErrRedirectNotFollowed)
}

func ok2xx(status int) bool { return status >= 200 && status < 300 }

// signatureRefusal reports the statuses servers answer a signature they do
// not read: 401 (Mastodon), 400 (some), 403 (PeerTube, to RFC 9421).
func signatureRefusal(status int) bool {
	return status == http.StatusBadRequest || status == http.StatusUnauthorized || status == http.StatusForbidden
}
