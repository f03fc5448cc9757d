package deliver

import (
	"crypto"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/sig"
)

// Deliverer sends activities through a Queue. Its methods are safe for
// concurrent use; Run may be called by several processes sharing a Queue.
type Deliverer struct {
	queue   driver.Queue
	keys    SenderKeys
	client  *client.Client
	cfg     Config
	limiter *HostLimiter
	log     *slog.Logger
	wake    chan struct{}

	signersMu sync.Mutex
	signers   map[string]signerEntry
	// signing bounds concurrent signatures to the cores: signing is pure
	// CPU, and more signers than cores only add preemption.
	signing chan struct{}
	// negotiated keeps the signature each host asked for with
	// Accept-Signature and then accepted (negotiate.go).
	negotiated negotiatedShapes

	tel telemetry

	// One log per store that can fail on every delivery (storelog.go).
	breakerLog, availabilityLog, schemeLog *storeLog
}

type signerEntry struct {
	key    crypto.Signer
	signer *sig.Signer
}

// signersMax bounds the signer cache; past it the cache starts afresh.
const signersMax = 1024

// signerFor returns a Signer for key, reused while keyID names the same key.
// Building one under the lock also keeps sig's one-time key preparation
// (RSA precomputation) from running concurrently on a shared key.
func (d *Deliverer) signerFor(keyID string, key crypto.Signer) (*sig.Signer, error) {
	d.signersMu.Lock()
	defer d.signersMu.Unlock()
	if e, ok := d.signers[keyID]; ok && sameKey(e.key, key) {
		return e.signer, nil
	}
	s, err := sig.NewSigner(key, keyID, &sig.SignerConfig{Now: d.cfg.Now})
	if err != nil {
		return nil, err
	}
	if d.signers == nil || len(d.signers) >= signersMax {
		d.signers = make(map[string]signerEntry)
	}
	d.signers[keyID] = signerEntry{key: key, signer: s}
	return s, nil
}

func sameKey(a, b crypto.Signer) bool {
	pa, ok := a.Public().(interface{ Equal(crypto.PublicKey) bool })
	return ok && pa.Equal(b.Public())
}

// New returns a Deliverer sending through c, the guarded client, with keys
// from keys. A nil cfg means DefaultConfig().
func New(queue driver.Queue, keys SenderKeys, c *client.Client, cfg *Config) (*Deliverer, error) {
	if cfg == nil {
		cfg = DefaultConfig()
	}
	d := &Deliverer{queue: queue, keys: keys, client: c, cfg: *cfg, wake: make(chan struct{}, 1),
		signing: make(chan struct{}, runtime.GOMAXPROCS(0))}
	if queue == nil || keys == nil || c == nil {
		return nil, invalid("queue, keys and client are required")
	}
	x := &d.cfg
	if x.RetryAfterMax <= 0 {
		x.RetryAfterMax = RetryAfterMaxDefault
	}
	if x.Permanent == nil {
		x.Permanent = DefaultPermanent
	}
	if x.DisableBreaker {
		x.Breaker = nil
	} else {
		var b BreakerConfig
		if x.Breaker != nil {
			b = *x.Breaker
		}
		if b.Threshold <= 0 {
			b.Threshold = BreakerThresholdDefault
		}
		if b.CoolOff <= 0 {
			b.CoolOff = BreakerCoolOffDefault
		}
		if b.Store == nil {
			b.Store = &MemoryBreakerStore{}
		}
		x.Breaker = &b
	}
	if x.HostLimiter == nil {
		x.HostLimiter = NewHostLimiter(x.PerHost)
	}
	d.limiter = x.HostLimiter
	if x.Concurrency <= 0 {
		x.Concurrency = ConcurrencyDefault
	}
	if x.Lease <= 0 {
		x.Lease = LeaseDefault
	}
	if x.AttemptTimeout <= 0 {
		x.AttemptTimeout = AttemptTimeoutDefault
	}
	x.AttemptTimeout = min(x.AttemptTimeout, x.Lease/2)
	if x.PollInterval <= 0 {
		x.PollInterval = PollIntervalDefault
	}
	if x.ShutdownGrace <= 0 {
		x.ShutdownGrace = ShutdownGraceDefault
	}
	switch x.FirstScheme {
	case 0, sig.SchemeCavage, sig.SchemeRFC9421:
	default:
		return nil, invalid("unknown FirstScheme %d", x.FirstScheme)
	}
	if x.Schemes == nil {
		x.Schemes = sig.NewHostSchemes(sig.HostSchemesMaxDefault)
	}
	if !x.DisableAvailability {
		fillAvailability(&x.Availability)
	}
	if x.ReprobeAfter <= 0 {
		x.ReprobeAfter = ReprobeAfterDefault
	}
	if x.ContentType == "" {
		x.ContentType = ContentTypeDefault
	}
	if x.Now == nil {
		x.Now = time.Now
	}
	// Components handed over take the Deliverer's clock when they have
	// none of their own (the Queue's Notify gets it on each call).
	if ck, ok := keys.(*CachingSenderKeys); ok {
		ck.clock.Adopt(x.Now) // unless its own Config set one, or another Deliverer's came first
	}
	d.log = x.Logger
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	d.breakerLog = &storeLog{log: d.log, store: "breaker", now: x.Now}
	d.availabilityLog = &storeLog{log: d.log, store: "availability", now: x.Now}
	d.schemeLog = &storeLog{log: d.log, store: "scheme", now: x.Now}
	d.instrument()
	return d, nil
}
