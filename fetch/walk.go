package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"

	"github.com/fedkit/fedkit/origin"
)

// Defaults for WalkLimits.
const (
	WalkPagesDefault      = 100
	WalkItemsDefault      = 10_000
	WalkEmptyPagesDefault = 3
)

// WalkLimits bound a walk. Zero fields take the defaults.
type WalkLimits struct {
	// Pages is the most pages read. Defaults to WalkPagesDefault.
	Pages int
	// Items is the most items handed out; NextPage finishes the page that
	// reaches it. Defaults to WalkItemsDefault.
	Items int
	// EmptyPages is how many consecutive pages without items end the walk
	// (io.EOF) even though each links a next: WriteFreely links one past
	// the end, and a hostile server can do so forever. Before that, an empty
	// page ends the walk once the collection's totalItems have been read.
	// Defaults to WalkEmptyPagesDefault.
	EmptyPages int
	// ByHost compares pages to the collection by host rather than origin,
	// accepting another scheme or port of the same host, as Mastodon does.
	// Defaults to false (same origin).
	ByHost bool
}

func (l WalkLimits) withDefaults() WalkLimits {
	if l.Pages <= 0 {
		l.Pages = WalkPagesDefault
	}
	if l.Items <= 0 {
		l.Items = WalkItemsDefault
	}
	if l.EmptyPages <= 0 {
		l.EmptyPages = WalkEmptyPagesDefault
	}
	return l
}

// Item is one collection item as the page gives it.
type Item struct {
	// IRI is set when the page names the item by IRI.
	IRI string
	// Object is set when the page embeds the item.
	Object json.RawMessage
	// ID is the embedded object's id ("" for an IRI item or an anonymous object).
	ID string
	// Claim marks an embedded object whose id is on another origin than the
	// collection: that server's claim, to be fetched from its own id (with
	// Lookup) before it is trusted.
	Claim bool
}

// Walk reads a collection's items, page by page, as they are wanted. Use
// Next or All for items, NextPage for whole pages. A Walk is not safe for
// concurrent use.
type Walk struct {
	f      *Fetcher
	lim    WalkLimits
	origin string // the origin (or host) every page must be on
	// on is origin parsed once; onErr its parse error (nothing is on it).
	on    origin.Origin
	onErr error

	start    string          // collection IRI still to fetch, if any
	startDoc json.RawMessage // or the collection itself, embedded
	started  bool
	next     json.RawMessage // next page: IRI string or embedded object
	seen     map[string]bool
	pages    int
	items    int
	taken    int   // items read from pages, handed out or buffered
	total    int64 // the collection's totalItems; -1 while unknown
	empty    int   // consecutive pages without items
	buf      []Item
	err      error // sticky end: io.EOF or the error that ended the walk
}

// Walk returns a walk over the collection at collectionURL (an outbox, a
// followers collection). Nothing is fetched until the first Next or
// NextPage. The collection is fetched as Lookup fetches, and every page
// must be on the collection's origin.
func (f *Fetcher) Walk(collectionURL string, lim WalkLimits) *Walk {
	return &Walk{f: f, lim: lim.withDefaults(), start: collectionURL, seen: map[string]bool{}, total: -1}
}

// WalkEmbedded returns a walk over a collection another object embeds, as
// a post embeds its replies: collection is the property's JSON, an IRI or
// the collection itself (read without a request). The walk keeps to the
// embedder's origin, for the collection and each page, whatever the
// collection's id says. embedderID is the embedding document's id. An absent
// or null collection is an empty walk.
func (f *Fetcher) WalkEmbedded(embedderID string, collection json.RawMessage, lim WalkLimits) *Walk {
	w := &Walk{f: f, lim: lim.withDefaults(), seen: map[string]bool{}, total: -1}
	w.setOrigin(embedderID)
	var s string
	switch {
	case !hasValue(collection):
		w.startDoc = json.RawMessage("null") // absent or null: nothing to walk
	case json.Unmarshal(collection, &s) == nil:
		w.start = s
	default:
		w.startDoc = collection
	}
	return w
}

// Pages returns how many pages have been read.
func (w *Walk) Pages() int { return w.pages }

// Items returns how many items have been handed out.
func (w *Walk) Items() int { return w.items }

// Next returns the next item. It returns io.EOF at the end of the
// collection (or when a page seen before comes round again, or at an empty
// page once totalItems were read, or after WalkLimits.EmptyPages empty
// pages in a row), a
// ErrWalkLimit when the limits stop it with more to come, and any
// fetch or origin error that ended it.
func (w *Walk) Next(ctx context.Context) (Item, error) {
	for len(w.buf) == 0 {
		if w.items >= w.lim.Items {
			return Item{}, w.limitOrEOF()
		}
		page, err := w.readPage(ctx)
		if err != nil {
			return Item{}, err
		}
		w.buf = page
	}
	if w.items >= w.lim.Items {
		return Item{}, w.limit()
	}
	it := w.buf[0]
	w.buf = w.buf[1:]
	w.items++
	return it, nil
}

// All iterates over the items; the iteration stops after the first error,
// and io.EOF is not reported.
func (w *Walk) All(ctx context.Context) iter.Seq2[Item, error] {
	return func(yield func(Item, error) bool) {
		for {
			it, err := w.Next(ctx)
			if err == io.EOF {
				return
			}
			if !yield(it, err) || err != nil {
				return
			}
		}
	}
}

// NextPage returns the items of the next page, all of them even past the
// item limit; the walk then ends at the end of the page that reached it.
// Ends are reported as by Next.
func (w *Walk) NextPage(ctx context.Context) ([]Item, error) {
	if len(w.buf) > 0 {
		// Items of a page Next had started.
		page := w.buf
		w.buf = nil
		w.items += len(page)
		return page, nil
	}
	if w.items >= w.lim.Items {
		return nil, w.limitOrEOF()
	}
	page, err := w.readPage(ctx)
	if err != nil {
		return nil, err
	}
	w.items += len(page)
	return page, nil
}

func (w *Walk) limit() error {
	return fmt.Errorf("%w: stopped after %d pages and %d items (limits %d, %d)", ErrWalkLimit, w.pages, w.items, w.lim.Pages, w.lim.Items)
}

// limitOrEOF ends a walk at its item limit: a limit error when more would
// follow, io.EOF when the collection ended there anyway.
func (w *Walk) limitOrEOF() error {
	if w.err != nil {
		return w.err
	}
	if len(w.buf) > 0 || w.hasNext() {
		return w.limit()
	}
	return io.EOF
}

func (w *Walk) hasNext() bool {
	n := bytes.TrimSpace(w.next)
	return len(n) > 0 && string(n) != "null"
}

// itemsRaw returns a page's orderedItems, or its items.
func (p *head) itemsRaw() json.RawMessage {
	if len(p.OrderedItems) > 0 && string(p.OrderedItems) != "null" {
		return p.OrderedItems
	}
	return p.Items
}

func hasValue(r json.RawMessage) bool {
	r = bytes.TrimSpace(r)
	return len(r) > 0 && string(r) != "null"
}

// readPage reads the next page that has items to give and returns them;
// pages without items are skipped (still counted).
func (w *Walk) readPage(ctx context.Context) ([]Item, error) {
	if w.err != nil {
		return nil, w.err
	}
	for {
		items, err := w.readOne(ctx)
		if err != nil {
			w.err = err
			return nil, err
		}
		if items != nil {
			return items, nil
		}
	}
}

// readOne reads one page (or the collection itself). It returns nil items
// (not an error) for a page that holds none but may lead on.
func (w *Walk) readOne(ctx context.Context) ([]Item, error) {
	if !w.started {
		w.started = true
		var p *head
		if w.startDoc != nil {
			if !hasValue(w.startDoc) {
				return nil, io.EOF
			}
			var err error
			if p, err = parseHead(w.startDoc); err != nil {
				return nil, fmt.Errorf("collection: %w", err)
			}
		} else {
			if w.origin != "" && !w.onOrigin(w.start) {
				return nil, crossOriginPage(w.origin, w.start)
			}
			d, h, err := w.f.lookupHead(ctx, w.start, false)
			if err != nil {
				return nil, err
			}
			if w.origin == "" {
				w.setOrigin(d.ID)
			} else if !w.onOrigin(d.ID) {
				return nil, crossOriginPage(w.origin, d.ID)
			}
			p = h
		}
		if p.ID != "" {
			w.seen[p.ID] = true
		}
		w.noteTotal(p)
		if hasValue(p.First) {
			w.next = p.First
			// A collection with first is a page of its own only when it
			// holds items too.
			if hasValue(p.itemsRaw()) {
				return w.gave(w.take(p))
			}
			return nil, nil
		}
		// Without first it is its only page, even empty; a page given as
		// the start leads on through next.
		w.next = p.Next
		items, err := w.take(p)
		if err != nil {
			return nil, err
		}
		if len(items) == 0 && !w.hasNext() {
			return nil, io.EOF
		}
		return w.gave(items, nil)
	}
	if !w.hasNext() {
		return nil, io.EOF
	}
	if w.pages >= w.lim.Pages {
		return nil, w.limit()
	}
	ref := w.next
	w.next = nil
	var p *head
	var iri string
	if json.Unmarshal(ref, &iri) == nil {
		if w.seen[iri] {
			return nil, io.EOF
		}
		if !w.onOrigin(iri) {
			return nil, crossOriginPage(w.origin, iri)
		}
		d, h, err := w.f.lookupHead(ctx, iri, false)
		if err != nil {
			return nil, err
		}
		if !w.onOrigin(d.ID) {
			return nil, crossOriginPage(w.origin, d.ID)
		}
		w.seen[iri] = true
		p = h
	} else {
		// Embedded in the page before: no request.
		var err error
		if p, err = parseHead(ref); err != nil {
			return nil, fmt.Errorf("page: %w", err)
		}
	}
	if p.ID != "" {
		if iri == "" && w.seen[p.ID] {
			return nil, io.EOF
		}
		if !w.onOrigin(p.ID) {
			return nil, crossOriginPage(w.origin, p.ID)
		}
		w.seen[p.ID] = true
	}
	w.next = p.Next
	w.noteTotal(p)
	return w.gave(w.take(p))
}

// noteTotal keeps the first totalItems the walk meets: the collection's,
// or, when it gives none, a page's (WriteFreely's pages repeat it).
func (w *Walk) noteTotal(p *head) {
	if w.total < 0 {
		w.total = p.totalItems()
	}
}

// gave accounts for a page's items. A page without any returns nil items
// and no error, to be skipped, unless it ends the walk (io.EOF): it comes
// after the collection's totalItems were read, or ends a run of
// WalkLimits.EmptyPages such pages. Servers that link a next past the end
// (WriteFreely) would otherwise be walked to the page limit.
func (w *Walk) gave(items []Item, err error) ([]Item, error) {
	if err != nil {
		return nil, err
	}
	if len(items) > 0 {
		w.empty = 0
		w.taken += len(items)
		return items, nil
	}
	w.empty++
	if (w.total >= 0 && int64(w.taken) >= w.total) || w.empty >= w.lim.EmptyPages {
		return nil, io.EOF
	}
	return nil, nil
}

// setOrigin fixes the origin every page must be on, parsed once.
func (w *Walk) setOrigin(u string) {
	w.origin = u
	w.on, w.onErr = origin.Parse(u)
}

// onOrigin reports whether u is on the walk's origin (host, with ByHost).
func (w *Walk) onOrigin(u string) bool {
	if w.lim.ByHost {
		return w.sameAs(u, true)
	}
	return w.sameAs(u, false)
}

// sameAs compares u's origin, or only its host, with the walk's origin.
// Anything unparsable is never the same.
func (w *Walk) sameAs(u string, hostOnly bool) bool {
	if w.onErr != nil {
		return false
	}
	o, err := origin.Parse(u)
	if err != nil {
		return false
	}
	if hostOnly {
		return o.Host == w.on.Host
	}
	return o == w.on
}

// take counts a page and splits out its items.
func (w *Walk) take(p *head) ([]Item, error) {
	w.pages++
	raw := bytes.TrimSpace(p.itemsRaw())
	if !hasValue(raw) {
		return nil, nil
	}
	var elems []json.RawMessage
	if raw[0] == '[' {
		elems = splitArray(raw)
	} else {
		elems = []json.RawMessage{raw}
	}
	out := make([]Item, 0, len(elems))
	for _, e := range elems {
		e = bytes.TrimSpace(e)
		if len(e) == 0 {
			continue
		}
		switch e[0] {
		case '"':
			if s := jsonString(e); s != "" {
				out = append(out, Item{IRI: s})
			}
		case '{':
			id, ambiguous := objectID(e)
			it := Item{Object: e, ID: id}
			// An ambiguous id is no claim the collection can vouch for.
			it.Claim = ambiguous || (id != "" && !w.sameAs(id, false))
			out = append(out, it)
		}
	}
	return out, nil
}

// jsonString decodes a JSON string from a document json.Unmarshal has
// already validated. Without a backslash its text is what lies between the
// quotes (validation refused raw control characters), which spares the
// decoder on every IRI of a page.
func jsonString(raw json.RawMessage) string {
	if len(raw) >= 2 && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// splitArray returns the elements of a JSON array, as sub-slices without
// surrounding space, in one pass and without decoding them. raw must be an
// array json.Unmarshal has already validated (every page is, as a whole,
// before its items are read); FuzzSplitArray holds it to json.Unmarshal.
func splitArray(raw []byte) []json.RawMessage {
	var out []json.RawMessage
	depth, start := 0, -1
	inStr, esc := false, false
	for i := 1; i < len(raw)-1; i++ { // inside the outer brackets
		c := raw[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case ',':
			if depth == 0 {
				out = append(out, bytes.TrimSpace(raw[start:i]))
				start = -1
				continue
			}
		case '"':
			inStr = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, bytes.TrimSpace(raw[start:len(raw)-1]))
	}
	return out
}
