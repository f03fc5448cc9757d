package fetch

import (
	"github.com/fedkit/fedkit/sig"
)

// SchemeStore remembers which signature scheme each host accepted. It is
// sig.SchemeStore, as deliver.SchemeStore is, so one store can serve both.
type SchemeStore = sig.SchemeStore

// SchemeMemoryMaxDefault bounds a MemorySchemeStore by default.
const SchemeMemoryMaxDefault = sig.HostSchemesMaxDefault

// MemorySchemeStore is a SchemeStore in memory that forgets the least
// recently used host beyond its bound: sig.HostSchemes, shared with deliver.
type MemorySchemeStore = sig.HostSchemes

// NewMemorySchemeStore keeps at most maxHosts hosts; below 1 means
// SchemeMemoryMaxDefault.
func NewMemorySchemeStore(maxHosts int) *MemorySchemeStore {
	return sig.NewHostSchemes(maxHosts)
}
