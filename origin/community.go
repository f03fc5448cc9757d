package origin

import (
	"errors"
	"fmt"
	"strings"
)

// ErrOriginNotAllowed is returned by CommunityOrigin for an origin the
// repository may not claim.
var ErrOriginNotAllowed = errors.New("origin: origin not allowed for this repository")

// CommunityOrigin decides which origin a community record may assert. It
// returns the normalised origin, or an error wrapping ErrOriginNotAllowed
// (or a NormalizeDomain error for a malformed value):
//
//   - a repository on a trusted bridge PDS (bridged, as decided for this
//     event from a fresh resolution) may assert any well-formed domain;
//   - any other repository only the registrable domain of its verified
//     handle, or a parent of the handle below it ("c-nba.dev.coves.social"
//     may assert "dev.coves.social" or "coves.social");
//   - never a public suffix, the handle's own full name, or a look-alike:
//     matching is on dot boundaries, so "evilcoves.social" is not under
//     "coves.social".
//
// Callers re-evaluate on every profile update and drop the field, never
// the event, on error.
func CommunityOrigin(asserted, verifiedHandle string, bridged bool) (string, error) {
	o, err := NormalizeDomain(asserted)
	if err != nil {
		return "", err
	}
	if _, err := RegistrableDomain(o); err != nil {
		// A public suffix (or something publicsuffix cannot place) is
		// nobody's to claim, a bridge's included.
		return "", fmt.Errorf("%w: %w", ErrOriginNotAllowed, err)
	}
	if bridged {
		return o, nil
	}
	h, err := NormalizeDomain(verifiedHandle)
	if err != nil {
		return "", fmt.Errorf("%w: handle: %w", ErrOriginNotAllowed, err)
	}
	rd, err := RegistrableDomain(h)
	if err != nil {
		return "", fmt.Errorf("%w: handle: %w", ErrOriginNotAllowed, err)
	}
	if o == h {
		return "", fmt.Errorf("%w: the handle's own name", ErrOriginNotAllowed)
	}
	// o must be a proper parent of h on a dot boundary, at or below rd.
	if !strings.HasSuffix(h, "."+o) {
		return "", fmt.Errorf("%w: not a parent of the handle", ErrOriginNotAllowed)
	}
	if o != rd && !strings.HasSuffix(o, "."+rd) {
		return "", fmt.Errorf("%w: above the registrable domain", ErrOriginNotAllowed)
	}
	return o, nil
}
