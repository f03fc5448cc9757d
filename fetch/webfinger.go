package fetch

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/fedkit/fedkit/origin"
)

// Address is a fediverse handle: user@host.
type Address struct {
	// User is the user part, case kept.
	User string
	// Host is lower-case, in ASCII (IDNA) form.
	Host string
}

// String returns "user@host".
func (a Address) String() string { return a.User + "@" + a.Host }

// URI returns "acct:user@host".
func (a Address) URI() string { return "acct:" + a.User + "@" + a.Host }

// IsZero reports whether a is the zero Address.
func (a Address) IsZero() bool { return a == Address{} }

// ParseAddress reads "@alice@social.example", "alice@social.example" or
// "acct:alice@social.example". The user keeps its case; the host is
// normalised (lower case, IDNA, no trailing dot).
func ParseAddress(s string) (Address, error) {
	s = strings.TrimSpace(s)
	if len(s) > 1024 {
		return Address{}, fmt.Errorf("%w: too long", ErrInvalidAddress)
	}
	if len(s) >= 5 && strings.EqualFold(s[:5], "acct:") {
		s = s[5:]
	}
	s = strings.TrimPrefix(s, "@")
	user, host, ok := strings.Cut(s, "@")
	if !ok || user == "" || strings.ContainsAny(user, "@/?#:% \t\r\n") {
		return Address{}, fmt.Errorf("%w: %s", ErrInvalidAddress, clip(s))
	}
	h, err := normalizeHost(host)
	if err != nil {
		return Address{}, fmt.Errorf("%w: host: %w", ErrInvalidAddress, err)
	}
	return Address{User: user, Host: h}, nil
}

// normalizeHost accepts a domain with an optional port (a test server).
func normalizeHost(h string) (string, error) {
	name, port := h, ""
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h[:i], ":") {
		name, port = h[:i], h[i+1:]
		for _, c := range port {
			if c < '0' || c > '9' {
				return "", fmt.Errorf("bad port")
			}
		}
		if port == "" {
			return "", fmt.Errorf("bad port")
		}
	}
	o, err := origin.Parse("https://" + name)
	if err != nil || o.Port != "" || strings.ContainsAny(name, "/@?#[]") {
		return "", fmt.Errorf("bad host")
	}
	if port != "" {
		return o.Host + ":" + port, nil
	}
	return o.Host, nil
}

// JRD is a WebFinger (RFC 7033) document.
type JRD struct {
	// Subject is the account the answer is about ("acct:alice@host").
	Subject string `json:"subject"`
	// Aliases are other URIs of the account.
	Aliases []string `json:"aliases,omitempty"`
	// Links are the account's links.
	Links []Link `json:"links,omitempty"`
}

// Link is a JRD link.
type Link struct {
	// Rel is the link relation ("self").
	Rel string `json:"rel"`
	// Type is the target's media type.
	Type string `json:"type,omitempty"`
	// Href is the target URL.
	Href string `json:"href,omitempty"`
	// Template is a URI template (host-meta lrdd).
	Template string `json:"template,omitempty"`
	// Properties are the link's string-valued properties.
	Properties map[string]string `json:"properties,omitempty"`
}

// ASTypeProperty is the link property Lemmy uses to say which kind of
// actor a self link names.
const ASTypeProperty = "https://www.w3.org/ns/activitystreams#type"

// ParseJRD reads a JRD leniently: links and aliases that are not of the
// right shape are skipped. Only a body that is not a JSON object, or has no
// subject, is an error.
func ParseJRD(b []byte) (*JRD, error) {
	var raw struct {
		Subject any   `json:"subject"`
		Aliases any   `json:"aliases"`
		Links   []any `json:"links"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%w: JRD: %v", ErrMalformed, err)
	}
	j := &JRD{Subject: str(raw.Subject), Aliases: strs(raw.Aliases)}
	if j.Subject == "" {
		return nil, fmt.Errorf("%w: JRD without subject", ErrSubject)
	}
	for _, l := range raw.Links {
		m, ok := l.(map[string]any)
		if !ok {
			continue
		}
		lk := Link{Rel: str(m["rel"]), Type: str(m["type"]), Href: str(m["href"]), Template: str(m["template"])}
		if props, ok := m["properties"].(map[string]any); ok {
			for k, v := range props {
				if s, ok := v.(string); ok {
					if lk.Properties == nil {
						lk.Properties = map[string]string{}
					}
					lk.Properties[k] = s
				}
			}
		}
		if lk.Rel != "" {
			j.Links = append(j.Links, lk)
		}
	}
	return j, nil
}

// ActorLink is a WebFinger self link naming an ActivityPub actor.
type ActorLink struct {
	// Href is the actor's URL.
	Href string
	// Type is the link's media type.
	Type string
	// ActorType is the actor's type when the link says ("Person",
	// "Group"), as Lemmy's do; "" otherwise.
	ActorType string
}

// selfTypes are the types a self link must have exactly to name an actor.
var selfTypes = map[string]bool{
	"application/activity+json": true,
	`application/ld+json; profile="https://www.w3.org/ns/activitystreams"`: true,
}

// Actors returns the self links with an ActivityPub type, in order. Lemmy
// names both a user and a community for one name.
func (j *JRD) Actors() []ActorLink {
	var out []ActorLink
	for _, l := range j.Links {
		if l.Rel == "self" && selfTypes[l.Type] && l.Href != "" {
			out = append(out, ActorLink{Href: l.Href, Type: l.Type, ActorType: l.Properties[ASTypeProperty]})
		}
	}
	return out
}

// ParseHostMeta returns the lrdd template of a host-meta XRD document.
func ParseHostMeta(b []byte) (string, error) {
	var x struct {
		Links []struct {
			Rel      string `xml:"rel,attr"`
			Template string `xml:"template,attr"`
		} `xml:"Link"`
	}
	d := xml.NewDecoder(strings.NewReader(string(b)))
	d.Strict = true
	if err := d.Decode(&x); err != nil {
		return "", fmt.Errorf("%w: host-meta: %v", ErrMalformed, err)
	}
	for _, l := range x.Links {
		if l.Rel == "lrdd" && strings.Contains(l.Template, "{uri}") {
			return l.Template, nil
		}
	}
	return "", fmt.Errorf("%w: host-meta without lrdd template", ErrMalformed)
}

const (
	acceptJRD = "application/jrd+json, application/json"
	acceptXRD = "application/xrd+xml, application/xml, text/xml"
)

// wellKnownScheme is http for onion services (and every host when
// PlainHTTPWebFinger is set), https otherwise.
func (f *Fetcher) wellKnownScheme(host string) string {
	h := strings.ToLower(host)
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	if f.cfg.PlainHTTPWebFinger || strings.HasSuffix(strings.TrimSuffix(h, "."), ".onion") {
		return "http"
	}
	return "https"
}

// WebFinger asks the handle's host about it and returns the answer. A 404
// is followed by one more request where host-meta's lrdd template says;
// only a 200 is an answer (a 410 is a *StatusError matching ErrGone). The
// host answers only for itself: Lookup the actors before believing them.
func (f *Fetcher) WebFinger(ctx context.Context, handle string) (*JRD, error) {
	a, err := ParseAddress(handle)
	if err != nil {
		return nil, err
	}
	scheme := f.wellKnownScheme(a.Host)
	u := scheme + "://" + a.Host + "/.well-known/webfinger?resource=" + url.QueryEscape(a.URI())
	resp, err := f.get(ctx, u, getOpts{accept: acceptJRD, max: f.cfg.MaxDocumentBytes})
	if err != nil {
		return nil, err
	}
	if resp.status == http.StatusNotFound {
		tmpl, err := f.hostMeta(ctx, scheme+"://"+a.Host+"/.well-known/host-meta")
		if err != nil {
			return nil, f.statusError(resp)
		}
		u = strings.ReplaceAll(tmpl, "{uri}", url.QueryEscape(a.URI()))
		if resp, err = f.get(ctx, u, getOpts{accept: acceptJRD, max: f.cfg.MaxDocumentBytes}); err != nil {
			return nil, err
		}
	}
	if resp.status != http.StatusOK {
		return nil, f.statusError(resp)
	}
	if len(resp.body) == 0 {
		return nil, fmt.Errorf("%w: empty WebFinger answer", ErrMalformed)
	}
	return ParseJRD(resp.body)
}

func (f *Fetcher) hostMeta(ctx context.Context, u string) (string, error) {
	resp, err := f.get(ctx, u, getOpts{accept: acceptXRD, max: f.cfg.MaxDocumentBytes})
	if err != nil {
		return "", err
	}
	if resp.status != http.StatusOK {
		return "", f.statusError(resp)
	}
	return ParseHostMeta(resp.body)
}
