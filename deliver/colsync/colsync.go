package colsync

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"
)

// HeaderName is the HTTP header FEP-8fcf defines.
const HeaderName = "Collection-Synchronization"

// EmptyDigest is the digest of no followers.
const EmptyDigest = "0000000000000000000000000000000000000000000000000000000000000000"

// MaxHeaderBytes bounds a header ParseHeader reads.
const MaxHeaderBytes = 8 << 10

var (
	// ErrSyntax is returned by ParseHeader for a header it cannot read.
	ErrSyntax = errors.New("colsync: malformed header")
	// ErrMissing is returned by ParseHeader for a header without a
	// collectionId or url.
	ErrMissing = errors.New("colsync: header lacks collectionId or url")
	// ErrDigest is returned by ParseHeader for a digest that is not 64 hex
	// digits.
	ErrDigest = errors.New("colsync: digest is not 64 hex digits")
	// ErrInbox is returned by Origin for a URL without scheme and host.
	ErrInbox = errors.New("colsync: URL lacks scheme or host")
)

// Digest returns the XOR of the SHA-256 of each ID, in lower-case hex.
// Order does not matter, and an ID listed twice cancels out, as in Mastodon.
func Digest(ids []string) string {
	var acc [sha256.Size]byte
	for _, id := range ids {
		xorInto(&acc, id)
	}
	return hex.EncodeToString(acc[:])
}

// DigestOn returns the Digest of the IDs on origin (see OnOrigin).
func DigestOn(origin string, ids []string) string {
	var acc [sha256.Size]byte
	for _, id := range ids {
		if OnOrigin(id, origin) {
			xorInto(&acc, id)
		}
	}
	return hex.EncodeToString(acc[:])
}

func xorInto(acc *[sha256.Size]byte, id string) {
	h := sha256.Sum256([]byte(id))
	for i := range acc {
		acc[i] ^= h[i]
	}
}

// XOR folds more IDs into a digest, for a receiver checking a listed
// collection against its own digest; it returns an error for a digest that
// is not 64 hex digits.
func XOR(digest string, ids ...string) (string, error) {
	var acc [sha256.Size]byte
	if len(digest) != 2*sha256.Size {
		return "", ErrDigest
	}
	if _, err := hex.Decode(acc[:], []byte(digest)); err != nil {
		return "", ErrDigest
	}
	for _, id := range ids {
		xorInto(&acc, id)
	}
	return hex.EncodeToString(acc[:]), nil
}

// Origin returns rawURL's "scheme://host[:port]", lower-cased, the prefix
// follower IDs on the same server start with.
func Origin(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", ErrInbox
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// OnOrigin reports whether id starts with origin followed by a path, query or
// nothing, so "https://b.example" does not claim "https://b.example.net/x".
func OnOrigin(id, origin string) bool {
	if len(id) < len(origin) || !strings.EqualFold(id[:len(origin)], origin) {
		return false
	}
	rest := id[len(origin):]
	return rest == "" || rest[0] == '/' || rest[0] == '?' || rest[0] == '#'
}

// Header is a Collection-Synchronization header's value.
type Header struct {
	// CollectionID is the sender's followers collection.
	CollectionID string
	// Digest is the Digest of the sender's followers on the receiver's
	// server; ParseHeader leaves it empty when the header has none.
	Digest string
	// URL lists the sender's followers on the receiver's server.
	URL string
}

// String writes the header value as Mastodon does:
// collectionId="…", digest="…", url="…"; an empty Digest is left out.
func (h Header) String() string {
	s := `collectionId=` + quote(h.CollectionID)
	if h.Digest != "" {
		s += `, digest=` + quote(h.Digest)
	}
	return s + `, url=` + quote(h.URL)
}

func quote(s string) string {
	if !strings.ContainsAny(s, `"\`) {
		return `"` + s + `"`
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// ParseHeader reads a header value as Mastodon reads signature parameters:
// comma-separated key="value" (or key=token) pairs, unknown keys ignored.
// collectionId and url are required; a digest, when present, must be 64 hex
// digits and is returned lower-cased.
func ParseHeader(v string) (Header, error) {
	if len(v) > MaxHeaderBytes {
		return Header{}, ErrSyntax
	}
	var h Header
	seen := map[string]bool{}
	p := strings.TrimSpace(v)
	for p != "" {
		eq := strings.IndexByte(p, '=')
		if eq <= 0 {
			return Header{}, ErrSyntax
		}
		key := strings.TrimSpace(p[:eq])
		if key == "" || strings.ContainsAny(key, " \t,\"") {
			return Header{}, ErrSyntax
		}
		p = strings.TrimLeft(p[eq+1:], " \t")
		var val string
		if strings.HasPrefix(p, `"`) {
			var b strings.Builder
			i := 1
			for ; i < len(p) && p[i] != '"'; i++ {
				if p[i] == '\\' && i+1 < len(p) {
					i++
				}
				b.WriteByte(p[i])
			}
			if i >= len(p) {
				return Header{}, ErrSyntax
			}
			val, p = b.String(), p[i+1:]
		} else {
			end := strings.IndexByte(p, ',')
			if end < 0 {
				end = len(p)
			}
			val, p = strings.TrimSpace(p[:end]), p[end:]
			if val == "" || strings.ContainsAny(val, "\" \t") {
				return Header{}, ErrSyntax
			}
		}
		p = strings.TrimLeft(p, " \t")
		if p != "" {
			if p[0] != ',' {
				return Header{}, ErrSyntax
			}
			p = strings.TrimLeft(p[1:], " \t")
			if p == "" {
				return Header{}, ErrSyntax
			}
		}
		if seen[key] {
			return Header{}, ErrSyntax
		}
		seen[key] = true
		switch key {
		case "collectionId":
			h.CollectionID = val
		case "url":
			h.URL = val
		case "digest":
			h.Digest = strings.ToLower(val)
		}
	}
	if h.CollectionID == "" || h.URL == "" {
		return Header{}, ErrMissing
	}
	if seen["digest"] {
		if _, err := XOR(h.Digest); err != nil {
			return Header{}, ErrDigest
		}
	}
	return h, nil
}

// Followers is what an application tells the deliverer about a sender's
// followers on one server.
type Followers struct {
	// CollectionID is the sender's followers collection.
	CollectionID string
	// URL lists the sender's followers on that server, served to its signed
	// requests (Mastodon: /users/<name>/followers_synchronization).
	URL string
	// IDs are the followers on that server; others are ignored.
	IDs []string
}

// HeaderFor returns the header for a delivery to a server with origin.
func (f Followers) HeaderFor(origin string) Header {
	return Header{CollectionID: f.CollectionID, Digest: DigestOn(origin, f.IDs), URL: f.URL}
}
