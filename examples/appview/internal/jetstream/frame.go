package jetstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Frame kinds.
const (
	KindIdentity = "identity"
	KindAccount  = "account"
	KindCommit   = "commit"
)

// Commit operations.
const (
	OpCreate = "create"
	OpUpdate = "update"
	OpDelete = "delete"
)

// Frame is one v1 envelope. Raw keeps the bytes so an event can be stored
// for redrive exactly as received.
type Frame struct {
	DID      string    `json:"did"`
	TimeUS   int64     `json:"time_us"`
	Kind     string    `json:"kind"`
	Identity *Identity `json:"identity,omitempty"`
	Account  *Account  `json:"account,omitempty"`
	Commit   *Commit   `json:"commit,omitempty"`

	Raw json.RawMessage `json:"-"`
}

// Identity is the body of a kind=identity frame. Handle is never trusted.
type Identity struct {
	DID    string `json:"did"`
	Seq    int64  `json:"seq"`
	Time   string `json:"time"`
	Handle string `json:"handle,omitempty"`
}

// Account is the body of a kind=account frame.
type Account struct {
	Active bool   `json:"active"`
	DID    string `json:"did"`
	Seq    int64  `json:"seq"`
	Status string `json:"status,omitempty"`
	Time   string `json:"time"`
}

// Commit is the body of a kind=commit frame. Record and CID are absent on
// delete.
type Commit struct {
	Rev        string          `json:"rev"`
	Operation  string          `json:"operation"`
	Collection string          `json:"collection"`
	RKey       string          `json:"rkey"`
	Record     json.RawMessage `json:"record,omitempty"`
	CID        string          `json:"cid,omitempty"`
}

// ErrMalformed is wrapped by Parse for a frame that cannot be handled.
var ErrMalformed = errors.New("jetstream: malformed frame")

// maxFrameBytes bounds a frame; Jetstream's own default is far below.
const maxFrameBytes = 4 << 20

// Parse decodes and checks one frame. A frame of an unknown kind parses
// (Kind is kept) so newer servers do not break the consumer; a known kind
// without its body, a missing DID or a non-positive time_us is malformed.
func Parse(b []byte) (Frame, error) {
	var f Frame
	if len(b) > maxFrameBytes {
		return f, fmt.Errorf("%w: %d bytes", ErrMalformed, len(b))
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return Frame{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	f.Raw = append(json.RawMessage(nil), b...)
	if f.DID == "" {
		return f, fmt.Errorf("%w: no did", ErrMalformed)
	}
	if !didSyntax(f.DID) {
		return f, fmt.Errorf("%w: did is not a DID", ErrMalformed)
	}
	if f.TimeUS <= 0 {
		return f, fmt.Errorf("%w: no time_us", ErrMalformed)
	}
	switch f.Kind {
	case KindIdentity:
		if f.Identity == nil {
			return f, fmt.Errorf("%w: identity frame without body", ErrMalformed)
		}
		if f.Identity.DID != "" && f.Identity.DID != f.DID {
			return f, fmt.Errorf("%w: identity body names another DID", ErrMalformed)
		}
	case KindAccount:
		if f.Account == nil {
			return f, fmt.Errorf("%w: account frame without body", ErrMalformed)
		}
		if f.Account.DID != "" && f.Account.DID != f.DID {
			return f, fmt.Errorf("%w: account body names another DID", ErrMalformed)
		}
	case KindCommit:
		c := f.Commit
		if c == nil {
			return f, fmt.Errorf("%w: commit frame without body", ErrMalformed)
		}
		switch c.Operation {
		case OpCreate, OpUpdate:
			if len(c.Record) == 0 || string(c.Record) == "null" {
				return f, fmt.Errorf("%w: %s without record", ErrMalformed, c.Operation)
			}
		case OpDelete:
		default:
			return f, fmt.Errorf("%w: operation %q", ErrMalformed, c.Operation)
		}
		if c.Collection == "" || c.RKey == "" {
			return f, fmt.Errorf("%w: commit without collection or rkey", ErrMalformed)
		}
		if !keySyntax(c.Collection) || !keySyntax(c.RKey) || (c.Rev != "" && !keySyntax(c.Rev)) || (c.CID != "" && !keySyntax(c.CID)) {
			return f, fmt.Errorf("%w: collection, rkey, rev or cid outside the record-key characters", ErrMalformed)
		}
	}
	return f, nil
}

// maxDIDBytes and maxKeyBytes are atproto's bounds on a DID and a record
// key.
const (
	maxDIDBytes = 2048
	maxKeyBytes = 512
)

// didSyntax reports atproto DID syntax: "did:", a lower-case method, ":",
// then letters, digits and ._:%- (not ending in ':' or '%'). Anything else,
// a NUL above all, would fail every query about the event, and its redrive,
// in a way that looks like a database error and stalls its lane.
func didSyntax(s string) bool {
	rest, ok := strings.CutPrefix(s, "did:")
	if !ok || len(s) > maxDIDBytes {
		return false
	}
	method, id, ok := strings.Cut(rest, ":")
	if !ok || method == "" || id == "" {
		return false
	}
	for i := 0; i < len(method); i++ {
		if c := method[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(isAlnum(c) || c == '.' || c == '_' || c == ':' || c == '%' || c == '-') {
			return false
		}
	}
	last := id[len(id)-1]
	return last != ':' && last != '%'
}

// keySyntax reports a record key (or an NSID, a subset): 1 to 512 of
// letters, digits and ._:~-.
func keySyntax(s string) bool {
	if s == "" || len(s) > maxKeyBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isAlnum(c) || c == '.' || c == '_' || c == ':' || c == '~' || c == '-') {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
