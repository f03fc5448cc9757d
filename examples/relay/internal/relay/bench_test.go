package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/fedkit/fedkit/examples/relay/internal/store"
)

// BenchmarkRelayCreate measures handling one public Create for 1,000
// subscribers (store read, fan-out planning, Announce for LitePub ones),
// past the signature check, against a same-run baseline of decoding the
// activity alone. relay_per_decode says how much the relay adds.
func BenchmarkRelayCreate(b *testing.B) {
	fx := newFixture(b, nil)
	ctx := context.Background()
	for i := range 1000 {
		st := store.StyleMastodon
		if i%4 == 0 {
			st = store.StyleLitePub
		}
		h := fmt.Sprintf("s%d.example", i)
		_ = fx.store.Put(ctx, store.Subscriber{Actor: "https://" + h + "/actor", Inbox: "https://" + h + "/inbox", Host: h,
			Style: st, State: store.StateActive, Since: time.Now()})
	}
	a := fx.peers["a"]
	_ = fx.store.Put(ctx, subscriberA(a))
	body, _ := json.Marshal(map[string]any{"id": "https://a.example/n/1/activity", "type": "Create", "actor": a.actor,
		"to": []string{Public}, "object": map[string]any{"id": "https://a.example/n/1", "type": "Note", "content": "hello"}})

	var decode, relay float64
	b.Run("baseline-decode", func(b *testing.B) {
		for b.Loop() {
			var act activity
			_ = json.Unmarshal(body, &act)
		}
		decode = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("relay", func(b *testing.B) {
		for b.Loop() {
			var act activity
			_ = json.Unmarshal(body, &act)
			fx.r.handle(ctx, &act, body, a.host)
			fx.send.take()
		}
		relay = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		if decode > 0 {
			b.ReportMetric(relay/decode, "relay_per_decode")
		}
	})
}
