package xrpc

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fedkit/fedkit/examples/appview/internal/store"
	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/origin"
)

// Method names served under /xrpc/.
const (
	MethodGetProfile   = "dev.fedkit.appview.actor.getProfile"
	MethodGetPosts     = "dev.fedkit.appview.actor.getPosts"
	MethodResolveActor = "dev.fedkit.appview.actor.resolveActor"
)

// Error names in bodies.
const (
	ErrInvalidRequest = "InvalidRequest"
	ErrActorNotFound  = "ActorNotFound"
	ErrAmbiguousActor = "AmbiguousActor"
	ErrInternal       = "InternalServerError"
	ErrMethodNotFound = "MethodNotImplemented"
)

// Store is what the handlers read.
type Store interface {
	ActorByDID(ctx context.Context, did string) (*store.Actor, error)
	ActorByHandle(ctx context.Context, handle string) (*store.Actor, error)
	PostsByAuthor(ctx context.Context, did string, before time.Time, beforeURI string, limit int) ([]store.Post, error)
	Origins() store.OriginIndex
}

// Server is the HTTP handler.
type Server struct {
	store Store
	log   *slog.Logger
	mux   *http.ServeMux
}

// New returns a Server. A nil logger discards.
func New(s Store, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv := &Server{store: s, log: log, mux: http.NewServeMux()}
	srv.mux.HandleFunc("GET /xrpc/"+MethodGetProfile, srv.getProfile)
	srv.mux.HandleFunc("GET /xrpc/"+MethodGetPosts, srv.getPosts)
	srv.mux.HandleFunc("GET /xrpc/"+MethodResolveActor, srv.resolveActor)
	srv.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	srv.mux.HandleFunc("/xrpc/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, ErrMethodNotFound, "no such method")
	})
	return srv
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// ProfileView is an actor with its origin fields. Cleared ("") and
// untouched (NULL) origin columns are both omitted.
type ProfileView struct {
	DID            string `json:"did"`
	Handle         string `json:"handle"`
	Type           string `json:"type"` // "user" or "community"
	Name           string `json:"name,omitempty"`
	DisplayName    string `json:"displayName,omitempty"`
	Description    string `json:"description,omitempty"`
	Origin         string `json:"origin,omitempty"`
	OriginUsername string `json:"originUsername,omitempty"`
	OriginURL      string `json:"originUrl,omitempty"`
	OriginSoftware string `json:"originSoftware,omitempty"`
}

// AuthorView is the author block on each post: no URL, as on Coves.
type AuthorView struct {
	DID            string `json:"did"`
	Handle         string `json:"handle"`
	DisplayName    string `json:"displayName,omitempty"`
	Origin         string `json:"origin,omitempty"`
	OriginUsername string `json:"originUsername,omitempty"`
	OriginSoftware string `json:"originSoftware,omitempty"`
}

// PostView is one post in getPosts.
type PostView struct {
	URI       string     `json:"uri"`
	CID       string     `json:"cid,omitempty"`
	Text      string     `json:"text"`
	CreatedAt string     `json:"createdAt"`
	Author    AuthorView `json:"author"`
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func profileView(a *store.Actor) ProfileView {
	return ProfileView{
		DID: a.DID, Handle: a.Handle, Type: string(a.Kind), Name: a.Name,
		DisplayName: a.DisplayName, Description: a.Description,
		Origin: deref(a.Origin.Origin), OriginUsername: deref(a.Origin.Username),
		OriginURL: deref(a.Origin.URL), OriginSoftware: deref(a.Origin.Software),
	}
}

func authorView(a *store.Actor) AuthorView {
	return AuthorView{
		DID: a.DID, Handle: a.Handle, DisplayName: a.DisplayName,
		Origin: deref(a.Origin.Origin), OriginUsername: deref(a.Origin.Username),
		OriginSoftware: deref(a.Origin.Software),
	}
}

type apiError struct {
	status int
	name   string
	msg    string
}

// actor resolves the actor parameter. Input is refused (400) before any
// query; an outage is a logged 500, never a 404.
func (s *Server) actor(r *http.Request) (*store.Actor, *apiError) {
	ctx := r.Context()
	raw := r.URL.Query().Get("actor")
	a, err := origin.ParseAddress(raw)
	if err != nil {
		msg := "invalid actor"
		var be *origin.BadRequestError
		if errors.As(err, &be) {
			msg += ": " + string(be.Code)
		}
		return nil, &apiError{http.StatusBadRequest, ErrInvalidRequest, msg}
	}
	var act *store.Actor
	switch a.Kind {
	case origin.KindDID:
		if _, err := identity.ParseDID(a.DID); err != nil {
			return nil, &apiError{http.StatusBadRequest, ErrInvalidRequest, "invalid actor: unsupported DID method"}
		}
		act, err = s.store.ActorByDID(ctx, a.DID)
	case origin.KindHandle:
		act, err = s.store.ActorByHandle(ctx, a.Handle)
	case origin.KindOrigin:
		var did string
		did, err = origin.LookupOrigin(ctx, s.store.Origins(), a)
		if err == nil {
			act, err = s.store.ActorByDID(ctx, did)
		}
	default:
		return nil, &apiError{http.StatusBadRequest, ErrInvalidRequest, "invalid actor"}
	}
	switch {
	case err == nil:
		return act, nil
	case errors.Is(err, store.ErrNotFound), errors.Is(err, origin.ErrNotFound):
		return nil, &apiError{http.StatusNotFound, ErrActorNotFound, "actor not found"}
	case errors.Is(err, store.ErrAmbiguous), errors.Is(err, origin.ErrAmbiguous):
		return nil, &apiError{http.StatusConflict, ErrAmbiguousActor, "actor matches more than one account; use the exact address or the DID"}
	}
	s.log.ErrorContext(ctx, "xrpc: actor lookup failed", "kind", int(a.Kind), "err", err)
	return nil, &apiError{http.StatusInternalServerError, ErrInternal, "internal error"}
}

func (s *Server) getProfile(w http.ResponseWriter, r *http.Request) {
	a, e := s.actor(r)
	if e != nil {
		writeError(w, e.status, e.name, e.msg)
		return
	}
	writeJSON(w, http.StatusOK, profileView(a))
}

func (s *Server) resolveActor(w http.ResponseWriter, r *http.Request) {
	a, e := s.actor(r)
	if e != nil {
		writeError(w, e.status, e.name, e.msg)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"did": a.DID, "handle": a.Handle})
}

// cursorSep joins a page cursor's time and URI; neither contains it.
const cursorSep = "::"

// Limits of getPosts.
const (
	PostsLimitDefault = 50
	PostsLimitMax     = 100
)

func (s *Server) getPosts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := PostsLimitDefault
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > PostsLimitMax {
			writeError(w, http.StatusBadRequest, ErrInvalidRequest, "limit must be 1-100")
			return
		}
		limit = n
	}
	var before time.Time
	var beforeURI string
	if v := q.Get("cursor"); v != "" {
		ts, uri, _ := strings.Cut(v, cursorSep)
		t, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil || !strings.HasPrefix(uri, "at://") {
			writeError(w, http.StatusBadRequest, ErrInvalidRequest, "bad cursor")
			return
		}
		before, beforeURI = t, uri
	}
	a, e := s.actor(r)
	if e != nil {
		writeError(w, e.status, e.name, e.msg)
		return
	}
	posts, err := s.store.PostsByAuthor(r.Context(), a.DID, before, beforeURI, limit)
	if err != nil {
		s.log.ErrorContext(r.Context(), "xrpc: posts", "err", err)
		writeError(w, http.StatusInternalServerError, ErrInternal, "internal error")
		return
	}
	out := struct {
		Author ProfileView `json:"author"`
		Feed   []PostView  `json:"feed"`
		Cursor string      `json:"cursor,omitempty"`
	}{Author: profileView(a), Feed: []PostView{}}
	av := authorView(a)
	for _, p := range posts {
		out.Feed = append(out.Feed, PostView{URI: p.URI, CID: p.CID, Text: p.Text,
			CreatedAt: p.CreatedAt.UTC().Format(time.RFC3339Nano), Author: av})
	}
	if len(posts) == limit {
		p := posts[len(posts)-1]
		out.Cursor = p.CreatedAt.UTC().Format(time.RFC3339Nano) + cursorSep + p.URI
	}
	writeJSON(w, http.StatusOK, out)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, name, msg string) {
	writeJSON(w, status, map[string]string{"error": name, "message": msg})
}
