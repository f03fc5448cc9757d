package sig

import "errors"

// ErrGone is returned (wrapped) by a KeyResolver when the key's document or
// its actor answered 410 Gone: the account was deleted. The Verifier
// reports it wrapped with ErrUnknownKey; an inbox may still accept the
// account's Delete of itself, as Mastodon does.
var ErrGone = errors.New("sig: key owner gone")
