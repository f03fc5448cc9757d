package deliver

import (
	"github.com/fedkit/fedkit/sig"
)

func otherScheme(s sig.Scheme) sig.Scheme {
	if s == sig.SchemeRFC9421 {
		return sig.SchemeCavage
	}
	return sig.SchemeRFC9421
}

// SchemeStore remembers which signature scheme each host accepted, so the
// deliverer signs with it first next time. Implementations must be safe for
// concurrent use; one store may be shared by several Deliverers (and by
// fetch, whose SchemeStore is the same sig.SchemeStore).
type SchemeStore = sig.SchemeStore

// SchemeMemoryMaxDefault bounds a MemorySchemeStore's hosts by default.
const SchemeMemoryMaxDefault = sig.HostSchemesMaxDefault

// MemorySchemeStore is a SchemeStore in memory that forgets the least
// recently used host beyond its bound: sig.HostSchemes, shared with fetch.
type MemorySchemeStore = sig.HostSchemes

// NewMemorySchemeStore returns a store keeping at most maxHosts hosts;
// maxHosts below 1 means SchemeMemoryMaxDefault.
func NewMemorySchemeStore(maxHosts int) *MemorySchemeStore {
	return sig.NewHostSchemes(maxHosts)
}
