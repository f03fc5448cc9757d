package redisstate

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/directory"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	t.Parallel()
	in := directory.StateRecord{
		State: directory.StateRetrying, Registered: true, Protocol: directory.V2,
		ProfileDigest: strings.Repeat("ab", 32), LastAttempt: time.Unix(1791066600, 0).UTC(),
		RetryAt: time.Unix(1791067000, 0).UTC(), Attempts: 4, Operation: directory.OpHeartbeat,
		Code: directory.CodeRateLimited, Diagnostic: directory.DiagDirectory,
	}
	kv := encode(in)
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = toString(kv[i+1])
	}
	out, err := decode(m)
	if err != nil || out != in {
		t.Fatalf("decode = %+v, %v; want %+v", out, err, in)
	}
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	panic("unexpected type")
}

// FuzzDecode: whatever a tampered hash holds, decode returns a valid
// record or ErrInvalidRecord, and never panics.
func FuzzDecode(f *testing.F) {
	f.Add("registered", "1", "3", strings.Repeat("0", 64), "1791066600", "5", "heartbeat", "recorded", "", "")
	f.Add("x", "2", "-1", "zz", "-5", "99", "dance", "created", "teapot", "free text")
	f.Fuzz(func(t *testing.T, st, reg, pv, pd, ts, n, op, oc, ec, dg string) {
		m := map[string]string{fState: st, fRegistered: reg, fProtocol: pv, fDigest: pd,
			fAttempt: ts, fSuccess: ts, fHeartbeat: ts, fRetry: ts, fAttempts: n,
			fOperation: op, fOutcome: oc, fCode: ec, fDiag: dg}
		r, err := decode(m)
		if err != nil {
			if !errors.Is(err, directory.ErrInvalidRecord) {
				t.Fatalf("err = %v, want ErrInvalidRecord", err)
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("decoded an invalid record: %v", err)
		}
	})
}
