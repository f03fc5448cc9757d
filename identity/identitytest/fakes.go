package identitytest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/origin"
)

// Resolver is an in-memory identity.Resolver for tests and benchmarks.
// LookupDID answers from Set; Hook, if set, runs first (block in it to stage
// races, or return an error).
type Resolver struct {
	// Hook runs at the start of each LookupDID; its error is returned.
	Hook func(ctx context.Context, did identity.DID) error

	mu    sync.Mutex
	ids   map[identity.DID]identity.Identity
	errs  map[identity.DID]error
	calls map[identity.DID]int
	total atomic.Int64
}

var _ identity.Resolver = (*Resolver)(nil)

// NewResolver returns an empty Resolver.
func NewResolver() *Resolver {
	return &Resolver{ids: map[identity.DID]identity.Identity{}, errs: map[identity.DID]error{}, calls: map[identity.DID]int{}}
}

// Set makes LookupDID return id for id.DID.
func (r *Resolver) Set(id identity.Identity) { r.SetFor(id.DID, id) }

// SetFor makes LookupDID return id when asked for did, even when id names
// another DID (an impersonation or a broken directory).
func (r *Resolver) SetFor(did identity.DID, id identity.Identity) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids[did] = id
	delete(r.errs, did)
}

// SetErr makes LookupDID fail for did with err.
func (r *Resolver) SetErr(did identity.DID, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs[did] = err
}

// Calls counts LookupDID calls for did.
func (r *Resolver) Calls(did identity.DID) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[did]
}

// TotalCalls counts every LookupDID and ResolveHandle call.
func (r *Resolver) TotalCalls() int { return int(r.total.Load()) }

// LookupDID implements identity.Resolver.
func (r *Resolver) LookupDID(ctx context.Context, did identity.DID) (*identity.Identity, error) {
	r.total.Add(1)
	r.mu.Lock()
	r.calls[did]++
	r.mu.Unlock()
	if r.Hook != nil {
		if err := r.Hook(ctx, did); err != nil {
			return nil, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.errs[did]; err != nil {
		return nil, err
	}
	id, ok := r.ids[did]
	if !ok {
		return nil, identity.ErrDIDNotFound
	}
	return &id, nil
}

// ResolveHandle implements identity.Resolver from the identities Set.
func (r *Resolver) ResolveHandle(_ context.Context, h identity.Handle) (identity.DID, error) {
	r.total.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range r.ids {
		if id.Handle == h {
			return id.DID, nil
		}
	}
	return "", identity.ErrHandleNotFound
}

// StaleResolver stages a refresher that resolved before a rename and then
// stalled: its first LookupDID takes the wrapped Resolver's answer at once
// but returns it only after Release is closed; later lookups pass through.
type StaleResolver struct {
	*Resolver
	// Resolved is closed when the first answer has been taken.
	Resolved chan struct{}
	// Release, closed by the test, lets the first answer go.
	Release chan struct{}

	once sync.Once
}

// NewStaleResolver returns a StaleResolver over r.
func NewStaleResolver(r *Resolver) *StaleResolver {
	return &StaleResolver{Resolver: r, Resolved: make(chan struct{}), Release: make(chan struct{})}
}

// LookupDID implements identity.Resolver.
func (s *StaleResolver) LookupDID(ctx context.Context, did identity.DID) (*identity.Identity, error) {
	first := false
	s.once.Do(func() { first = true })
	id, err := s.Resolver.LookupDID(ctx, did)
	if first {
		close(s.Resolved)
		<-s.Release
	}
	return id, err
}

// Store is an in-memory application store: identity.Store and
// identity.Lister (and HandleHolder, OriginLister) over rows keyed by DID,
// with unique handles.
type Store struct {
	// SetHandleErr, if set, is returned by SetHandle instead of writing.
	SetHandleErr error

	mu      sync.Mutex
	rows    map[identity.DID]identity.Subject
	origins map[identity.DID]origin.Write
	reads   atomic.Int64
	writes  atomic.Int64
	clears  atomic.Int64
}

var (
	_ identity.Store        = (*Store)(nil)
	_ identity.Lister       = (*Store)(nil)
	_ identity.HandleHolder = (*Store)(nil)
	_ identity.OriginLister = (*Store)(nil)
)

// NewStore returns an empty Store.
func NewStore() *Store {
	return &Store{rows: map[identity.DID]identity.Subject{}, origins: map[identity.DID]origin.Write{}}
}

// Put inserts or replaces a row.
func (s *Store) Put(sub identity.Subject) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows[sub.DID] = sub
}

// Delete removes a row.
func (s *Store) Delete(did identity.DID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.rows, did)
}

// Row returns did's row as stored.
func (s *Store) Row(did identity.DID) (identity.Subject, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rows[did]
	return r, ok
}

// Origin returns the origin fields last written by ClearOrigin, and whether
// any were written.
func (s *Store) Origin(did identity.DID) (origin.Write, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.origins[did]
	return f, ok
}

// Reads counts Subject calls.
func (s *Store) Reads() int { return int(s.reads.Load()) }

// Writes counts successful SetHandle calls.
func (s *Store) Writes() int { return int(s.writes.Load()) }

// Clears counts ClearOrigin calls.
func (s *Store) Clears() int { return int(s.clears.Load()) }

// Subject implements identity.Store.
func (s *Store) Subject(_ context.Context, did identity.DID) (identity.Subject, error) {
	s.reads.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rows[did]
	if !ok {
		return identity.Subject{}, identity.ErrUnknownDID
	}
	return r, nil
}

// SetHandle implements identity.Store.
func (s *Store) SetHandle(_ context.Context, sub identity.Subject, h identity.Handle) error {
	if s.SetHandleErr != nil {
		return s.SetHandleErr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for did, r := range s.rows {
		if did != sub.DID && r.Handle == h {
			return identity.ErrHandleTaken
		}
	}
	r, ok := s.rows[sub.DID]
	if !ok {
		return errors.Join(identity.ErrUnknownDID, errors.New("row vanished"))
	}
	r.Handle = h
	s.rows[sub.DID] = r
	s.writes.Add(1)
	return nil
}

// HolderOf implements identity.HandleHolder.
func (s *Store) HolderOf(_ context.Context, h identity.Handle) (identity.Subject, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.rows {
		if r.Handle == h {
			return r, nil
		}
	}
	return identity.Subject{}, identity.ErrUnknownDID
}

// ClearOrigin implements identity.Store.
func (s *Store) ClearOrigin(_ context.Context, sub identity.Subject, cleared origin.Write) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rows[sub.DID]
	if !ok {
		return identity.ErrUnknownDID
	}
	r.HasOrigin, r.Origin = false, ""
	s.rows[sub.DID] = r
	s.origins[sub.DID] = cleared
	s.clears.Add(1)
	return nil
}

// ListBridged implements identity.Lister: every row, in no set order.
func (s *Store) ListBridged(ctx context.Context, _ []string, fn func(identity.Subject) error) error {
	return s.list(ctx, func(identity.Subject) bool { return true }, fn)
}

// ListWithOrigin implements identity.OriginLister: every row with
// HasOrigin, in no set order.
func (s *Store) ListWithOrigin(ctx context.Context, fn func(identity.Subject) error) error {
	return s.list(ctx, func(r identity.Subject) bool { return r.HasOrigin }, fn)
}

// list calls fn for a snapshot of the rows keep accepts, so fn may write.
func (s *Store) list(ctx context.Context, keep func(identity.Subject) bool, fn func(identity.Subject) error) error {
	s.mu.Lock()
	rows := make([]identity.Subject, 0, len(s.rows))
	for _, r := range s.rows {
		if keep(r) {
			rows = append(rows, r)
		}
	}
	s.mu.Unlock()
	for _, r := range rows {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}
