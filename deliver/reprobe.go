package deliver

import (
	"context"
	"time"

	"github.com/fedkit/fedkit/sig"
)

// ReprobeAfterDefault is how long a host stays remembered as draft-cavage
// before RFC 9421 is tried on it again: a week, so that a fleet upgrading
// to Mastodon 4.5 moves over within days, at the cost of one refused
// request a week to each host that still reads only draft-cavage
// (GoToSocial, Misskey, Akkoma, Pixelfed, Lemmy).
const ReprobeAfterDefault = 7 * 24 * time.Hour

// recall returns the scheme remembered for host, whether one is, and
// whether this delivery is the re-probe: host is remembered as
// draft-cavage since at least ReprobeAfter. The probe is claimed before it
// is sent, by dating the memory now, so that deliveries running meanwhile
// (here or in another process sharing the store) do not probe too: one
// probe per period, on an ordinary delivery.
func (d *Deliverer) recall(ctx context.Context, host string) (sig.Scheme, bool, bool) {
	ls, dated := d.cfg.Schemes.(sig.LearnedSchemeStore)
	if !dated || d.cfg.DisableReprobe {
		s, ok, err := d.cfg.Schemes.Scheme(ctx, host)
		if d.schemeLog.note(err, "deliver: scheme store failed", "host", host) {
			return 0, false, false
		}
		return s, ok, false
	}
	l, ok, err := ls.Learned(ctx, host)
	if d.schemeLog.note(err, "deliver: scheme store failed", "host", host) {
		return 0, false, false
	}
	if !ok || l.Scheme != sig.SchemeCavage {
		return l.Scheme, ok, false
	}
	now := d.cfg.Now()
	if !l.Learned.IsZero() && now.Sub(l.Learned) < d.cfg.ReprobeAfter {
		return l.Scheme, true, false
	}
	// Undated (told through SetScheme, by fetch or an older store): date
	// it now and probe a period later.
	probe := !l.Learned.IsZero()
	err = ls.Learn(ctx, host, sig.LearnedScheme{Scheme: sig.SchemeCavage, Learned: now})
	if d.schemeLog.note(err, "deliver: scheme store failed", "host", host) {
		return l.Scheme, true, false // no probe we could not claim
	}
	return l.Scheme, true, probe
}

// learn remembers that host accepted s, dated by the caller's clock when
// the store keeps dates.
func (d *Deliverer) learn(ctx context.Context, host string, s sig.Scheme) error {
	if ls, ok := d.cfg.Schemes.(sig.LearnedSchemeStore); ok {
		return ls.Learn(ctx, host, sig.LearnedScheme{Scheme: s, Learned: d.cfg.Now()})
	}
	return d.cfg.Schemes.SetScheme(ctx, host, s)
}
