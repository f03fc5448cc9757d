package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// fileVersion is written into the file so a later layout can be told apart.
const fileVersion = 1

type fileDoc struct {
	Version     int          `json:"version"`
	Subscribers []Subscriber `json:"subscribers"`
}

// FileStore keeps subscribers in memory and in one JSON file, rewritten
// atomically (temporary file, fsync, rename, directory fsync) on every
// change, so a crash leaves either the old or the new list. It serves one
// process: the embedded default, which needs no database server.
type FileStore struct {
	path string

	mu   sync.RWMutex
	subs map[string]Subscriber
}

var _ Store = (*FileStore)(nil)

// OpenFile loads the store at path, creating nothing until the first change.
// A missing file is an empty store.
func OpenFile(path string) (*FileStore, error) {
	s := &FileStore{path: path, subs: map[string]Subscriber{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	var doc fileDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	if doc.Version != fileVersion {
		return nil, fmt.Errorf("store: %s: unknown version %d", path, doc.Version)
	}
	for _, sub := range doc.Subscribers {
		if err := sub.Validate(); err != nil {
			return nil, fmt.Errorf("store: %s: %w", path, err)
		}
		s.subs[sub.Actor] = sub
	}
	return s, nil
}

// Path returns the file's path.
func (s *FileStore) Path() string { return s.path }

// Put implements Store.
func (s *FileStore) Put(_ context.Context, sub Subscriber) error {
	if err := sub.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had := s.subs[sub.Actor]
	s.subs[sub.Actor] = sub
	if err := s.writeLocked(); err != nil {
		// Memory follows the file, so a failed write changes nothing.
		if had {
			s.subs[sub.Actor] = old
		} else {
			delete(s.subs, sub.Actor)
		}
		return err
	}
	return nil
}

// Get implements Store.
func (s *FileStore) Get(_ context.Context, actor string) (Subscriber, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sub, ok := s.subs[actor]
	return sub, ok, nil
}

// Delete implements Store.
func (s *FileStore) Delete(_ context.Context, actor string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.subs[actor]
	if !ok {
		return false, nil
	}
	delete(s.subs, actor)
	if err := s.writeLocked(); err != nil {
		s.subs[actor] = old
		return false, err
	}
	return true, nil
}

// List implements Store.
func (s *FileStore) List(_ context.Context) ([]Subscriber, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.sortedLocked(), nil
}

func (s *FileStore) sortedLocked() []Subscriber {
	out := make([]Subscriber, 0, len(s.subs))
	for _, sub := range s.subs {
		out = append(out, sub)
	}
	slices.SortFunc(out, func(a, b Subscriber) int { return strings.Compare(a.Actor, b.Actor) })
	return out
}

func (s *FileStore) writeLocked() error {
	b, err := json.MarshalIndent(fileDoc{Version: fileVersion, Subscribers: s.sortedLocked()}, "", "  ")
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := WriteFileAtomic(s.path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// WriteFileAtomic replaces path with data: a temporary file in the same
// directory is written and synced, renamed over path, and the directory is
// synced, so readers and crashes see either the old or the new content.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
