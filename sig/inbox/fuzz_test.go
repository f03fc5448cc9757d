package inbox

import "testing"

// FuzzParseActivity: the inbox's reader of untrusted bodies never panics,
// and what it accepts has a type and one actor.
func FuzzParseActivity(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		_, a, err := parseActivity(body)
		if err != nil {
			return
		}
		if a.Type == "" || a.Actor == "" {
			t.Fatalf("accepted %+v", a)
		}
	})
}
