package fetch

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// FuzzSplitArray holds splitArray to json.Unmarshal's reading of every
// valid array.
func FuzzSplitArray(f *testing.F) {
	for _, s := range []string{
		`[]`, `[ ]`, `["a"]`, `[ "a" , "b" ]`, `["a,b","c]\"d",{"x":[1,2]},[[],{}],null,true,-1.5e3]`,
		`["\\",1]`, `[{"a":"}"},"\u0022,"]`, "[\n\t\"x\"\r\n]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want []json.RawMessage
		b = bytes.TrimSpace(b)
		if len(b) == 0 || b[0] != '[' || json.Unmarshal(b, &want) != nil {
			return
		}
		got := splitArray(b)
		for i := range want {
			want[i] = bytes.TrimSpace(want[i])
		}
		if !slices.EqualFunc(got, want, func(x, y json.RawMessage) bool { return bytes.Equal(x, y) }) {
			t.Fatalf("splitArray(%s) = %q, want %q", b, got, want)
		}
	})
}
