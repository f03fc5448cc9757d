package serve

import (
	"bytes"
	"encoding/json"
)

// UnmarshalJSON reads an actor document as servers write it, so a remote
// actor (fetch.LookupAs[serve.Actor]) decodes too: @context a string, an
// object or an array (honk writes a string), publicKey an object or an
// array of them (the first is kept).
func (a *Actor) UnmarshalJSON(b []byte) error {
	type plain Actor // without this method
	v := struct {
		*plain
		Context   json.RawMessage `json:"@context"`
		PublicKey json.RawMessage `json:"publicKey"`
	}{plain: (*plain)(a)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	a.Context, a.PublicKey = nil, nil
	switch c := bytes.TrimSpace(v.Context); {
	case len(c) == 0 || string(c) == "null":
	case c[0] == '[':
		if err := json.Unmarshal(c, &a.Context); err != nil {
			return err
		}
	default:
		var one any
		if err := json.Unmarshal(c, &one); err != nil {
			return err
		}
		a.Context = []any{one}
	}
	switch k := bytes.TrimSpace(v.PublicKey); {
	case len(k) == 0 || string(k) == "null":
	case k[0] == '[':
		var keys []PublicKey
		if err := json.Unmarshal(k, &keys); err != nil {
			return err
		}
		if len(keys) > 0 {
			a.PublicKey = &keys[0]
		}
	default:
		a.PublicKey = &PublicKey{}
		if err := json.Unmarshal(k, a.PublicKey); err != nil {
			return err
		}
	}
	return nil
}
