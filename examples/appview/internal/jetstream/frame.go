package jetstream

import (
	"encoding/json"
	"errors"
	"fmt"
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
	}
	return f, nil
}
