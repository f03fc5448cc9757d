package deliver

import (
	"context"
	"errors"
	"net/url"
	"strings"
)

// ErrNotPortable is returned by GatewayInboxes and SendPortable for an inbox
// that is not an ap:// URL under a DID.
var ErrNotPortable = errors.New("deliver: not a portable ap:// inbox")

// PortableInbox is a portable actor's inbox (FEP-ef61) and the gateways it
// is delivered through.
type PortableInbox struct {
	// Inbox is the actor's ap:// inbox, such as
	// "ap://did:key:z6Mk.../actor/inbox"; the DID's colons may be
	// percent-encoded.
	Inbox string
	// Gateways are the actor's "gateways", as the application read them from
	// the actor: http(s) origins such as "https://gw.example".
	Gateways []string
}

// GatewayInboxes returns the URLs at which gateways take deliveries for
// inbox, a portable actor's ap:// inbox (FEP-ef61): for a gateway
// "https://gw.example", "https://gw.example/.well-known/apgateway/<did><path>".
// Gateways that are not bare http(s) origins are left out. It returns
// ErrNotPortable when inbox is not an ap:// URL under a DID.
func GatewayInboxes(inbox string, gateways []string) ([]string, error) {
	did, rest, ok := portableParts(inbox)
	if !ok {
		return nil, ErrNotPortable
	}
	out := make([]string, 0, len(gateways))
	for _, gw := range gateways {
		u, err := url.Parse(strings.TrimSpace(gw))
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
			continue
		}
		out = append(out, u.Scheme+"://"+u.Host+"/.well-known/apgateway/"+did+rest)
	}
	return out, nil
}

// portableParts splits an ap:// URL into its DID, unescaped, and the rest:
// the path and query, without a fragment.
func portableParts(s string) (did, rest string, ok bool) {
	r, ok := strings.CutPrefix(s, "ap://")
	if !ok {
		return "", "", false
	}
	authority := r
	if i := strings.IndexAny(r, "/?#"); i >= 0 {
		authority, rest = r[:i], r[i:]
	}
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
	}
	did, err := url.PathUnescape(authority)
	if err != nil || !validDID(did) {
		return "", "", false
	}
	if u, err := url.Parse("http://x" + rest); err != nil || u.Host != "x" {
		return "", "", false
	}
	return did, rest, true
}

// validDID checks did against the DID syntax (did:method:id, W3C DID Core
// 3.1), with percent-encodings already decoded, so it can stand in a path.
func validDID(did string) bool {
	rest, ok := strings.CutPrefix(did, "did:")
	method, id, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || method == "" || id == "" || strings.HasSuffix(id, ":") {
		return false
	}
	for _, c := range method {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	for _, c := range id {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && !strings.ContainsRune(".-_:", c) {
			return false
		}
	}
	return true
}

// SendPortable queues activity for portable actors' inboxes (FEP-ef61),
// delivered to each inbox through every one of its actor's gateways, since
// each gateway serves the actor's inbox and one being down must not lose the
// activity. It is SendBatch over the gateway URLs GatewayInboxes gives:
// one send, one job per gateway URL (duplicates removed), each signed,
// retried, held and limited by its gateway's host like any inbox.
// Give the activity its integrity proof (sig's eddsa-jcs-2022 proofs) before
// sending: a gateway trusts a portable object only with one. It returns
// ErrNotPortable when an inbox is not an ap:// URL, and ErrNoInboxes when no
// gateway URL is left.
func (d *Deliverer) SendPortable(ctx context.Context, keyID string, activity []byte, inboxes []PortableInbox, b Batch) error {
	var urls []string
	for _, p := range inboxes {
		u, err := GatewayInboxes(p.Inbox, p.Gateways)
		if err != nil {
			return err
		}
		if len(u) < len(p.Gateways) {
			d.log.Warn("deliver: gateways left out", "inbox", p.Inbox, "gateways", len(p.Gateways)-len(u))
		}
		urls = append(urls, u...)
	}
	return d.SendBatch(ctx, keyID, activity, urls, b)
}
