package deliver_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/internal/fedsim"
	"github.com/fedkit/fedkit/sig"
)

func count(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

// A host remembered as draft-cavage that upgrades (Mastodon 4.5 reads RFC
// 9421) is moved to RFC 9421 by one ordinary delivery once ReprobeAfter
// has passed, and not before.
func TestReprobeMovesUpgradedHostToRFC9421(t *testing.T) {
	t.Parallel()
	b := setupSim(t, func(c *deliver.Config) { c.FirstScheme = sig.SchemeCavage })
	const host = "upgrading.example"
	b.sim.SetHost(host, fedsim.Profile{Check: b.check(t, SignatureCheck{Schemes: []sig.Scheme{sig.SchemeCavage}}).Check})
	b.deliverOne(t, "1", host)                                                     // cavage, remembered
	b.sim.SetHost(host, fedsim.Profile{Check: b.check(t, SignatureCheck{}).Check}) // upgraded: reads both
	b.clock.Advance(deliver.ReprobeAfterDefault - time.Minute)
	b.deliverOne(t, "2", host) // not yet
	b.clock.Advance(time.Minute)
	b.deliverOne(t, "3", host) // the re-probe
	b.deliverOne(t, "4", host)
	if got, want := b.schemes(host), []string{"cavage", "cavage", "rfc9421", "rfc9421"}; !slices.Equal(got, want) {
		t.Fatalf("requests %v, want %v", got, want)
	}
}

// A host that still reads only draft-cavage costs one refused RFC 9421
// request per period, on the same attempt as its delivery, even with
// several deliveries due at once; the next period probes again.
func TestReprobeOncePerPeriodOnCavageOnlyHost(t *testing.T) {
	t.Parallel()
	b := setupSim(t, func(c *deliver.Config) { c.FirstScheme = sig.SchemeCavage; c.ReprobeAfter = time.Hour })
	const host = "gotosocial.example"
	b.sim.SetHost(host, fedsim.Profile{Check: b.check(t, SignatureCheck{Schemes: []sig.Scheme{sig.SchemeCavage}}).Check})
	b.deliverOne(t, "0", host)
	for period := 1; period <= 2; period++ {
		b.clock.Advance(time.Hour)
		before := len(b.schemes(host))
		var inboxes []string
		for i := range 5 {
			inboxes = append(inboxes, b.sim.URL(host, fmt.Sprintf("/users/u%d/inbox", i)))
		}
		b.send(t, fmt.Sprint(period), inboxes...)
		b.runDue(t)
		got := b.schemes(host)[before:]
		if count(got, "rfc9421") != 1 || count(got, "cavage") != 5 {
			t.Fatalf("period %d: requests %v, want one RFC 9421 probe and five cavage", period, got)
		}
	}
	for _, a := range b.rec.Attempts() {
		if a.Outcome != deliver.AttemptDelivered || a.Scheme != sig.SchemeCavage {
			t.Fatalf("attempt %+v", a)
		}
	}
}

// With DisableReprobe, or a store that keeps no dates, a remembered
// draft-cavage stays.
func TestReprobeDisabled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(*deliver.Config)
	}{
		{"DisableReprobe", func(c *deliver.Config) { c.DisableReprobe = true }},
		{"undated store", func(c *deliver.Config) { c.Schemes = undatedStore{sig.NewHostSchemes(0)} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupSim(t, func(c *deliver.Config) { c.FirstScheme = sig.SchemeCavage; tc.edit(c) })
			const host = "h.example"
			b.sim.SetHost(host, fedsim.Profile{Check: b.check(t, SignatureCheck{}).Check})
			b.deliverOne(t, "1", host)
			b.clock.Advance(30 * 24 * time.Hour)
			b.deliverOne(t, "2", host)
			if got, want := b.schemes(host), []string{"cavage", "cavage"}; !slices.Equal(got, want) {
				t.Fatalf("requests %v, want %v", got, want)
			}
		})
	}
}

// undatedStore hides the dates of the store it wraps.
type undatedStore struct{ sig.SchemeStore }
