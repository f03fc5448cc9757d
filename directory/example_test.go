package directory_test

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"log"
	"net/netip"
	"os"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/directorytest"
	"github.com/fedkit/fedkit/sig"
)

// exampleClient returns a client wired to an in-process fake Directory.
func exampleClient() (*directory.Client, *directorytest.Server) {
	pemBytes, err := os.ReadFile("../testdata/directory/testKey.TEST-ONLY.pem")
	if err != nil {
		log.Fatal(err)
	}
	key, err := sig.ParsePrivateKeyPEM(pemBytes)
	if err != nil {
		log.Fatal(err)
	}
	d := directorytest.New(&directorytest.Config{EnrollmentOpen: true,
		Keys: map[string]crypto.PublicKey{"https://relay.example/actor#main-key": key.Public()}})
	c, err := directory.New(key, &directory.Config{
		Actor:         "https://relay.example/actor",
		PublicBaseURL: "https://relay.example",
		Directories:   []directory.Entry{{Origin: d.Origin(), Enabled: true}},
		Profile:       directory.Profile{ParticipationMode: "open", Languages: []string{"fr", "en"}},
		Telemetry:     func(context.Context) (int64, error) { return 12, nil },
		HTTP:          d.Doer(), // omit in production: a guarded client is built
	})
	if err != nil {
		log.Fatal(err)
	}
	return c, d
}

func ExampleNew() {
	key, _ := sig.ParsePrivateKeyPEM(mustRead("../testdata/directory/testKey.TEST-ONLY.pem"))
	c, err := directory.New(key, &directory.Config{
		Actor:         "https://relay.example/actor",
		PublicBaseURL: "https://relay.example",
		Directories:   []directory.Entry{{Origin: "https://directory.example", Enabled: true}},
	})
	fmt.Println(err, len(c.Directories()))
	_, err = directory.New(key, &directory.Config{Actor: "https://relay.example/actor", PublicBaseURL: "https://relay.example/"})
	fmt.Println(errors.Is(err, directory.ErrConfig))
	// Output:
	// <nil> 1
	// true
}

func ExampleClient_Status() {
	c, d := exampleClient()
	st, err := c.Status(context.Background(), d.Origin())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.SchemaVersion, st.Versions(), st.Negotiate())
	// Output: 4 [v1 v2 v3] v3
}

func ExampleClient_Sync() {
	c, d := exampleClient()
	res, err := c.Sync(context.Background(), d.Origin(), nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Version, res.Outcome, res.StatusCode)
	reg, _ := d.Registration("https://relay.example/actor")
	fmt.Println(reg.Profile.Languages, reg.Telemetry)
	// Output:
	// v3 created 201
	// [en fr] 12
}

func ExampleClient_Register() {
	c, d := exampleClient()
	res, err := c.Register(context.Background(), d.Origin(), &directory.CallOpts{Version: directory.V1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Version, res.Operation, res.Outcome)
	// Output: v1 register created
}

func ExampleClient_Heartbeat() {
	c, d := exampleClient()
	ctx := context.Background()
	// Not registered yet: the 409 relay_not_registered permits exactly one
	// register and one final heartbeat.
	d.SetEnrollment(true)
	c.Register(ctx, d.Origin(), nil)
	d.Forget("https://relay.example/actor")
	res, err := c.Heartbeat(ctx, d.Origin(), nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Reconciled, res.RegisterOutcome, res.Outcome, res.Requests)
	// Output: true updated recorded 3
}

func ExampleClient_Unregister() {
	c, d := exampleClient()
	ctx := context.Background()
	c.Register(ctx, d.Origin(), nil)
	res, _ := c.Unregister(ctx, d.Origin(), nil)
	fmt.Println(res.Outcome)
	res, _ = c.Unregister(ctx, d.Origin(), nil)
	fmt.Println(res.Outcome)
	// Output:
	// removed
	// absent
}

func ExampleClassOf() {
	c, d := exampleClient()
	d.Enqueue(directorytest.Reply{StatusCode: 429, Code: directory.CodeRateLimited, RetryAfter: "3600"})
	_, err := c.Register(context.Background(), d.Origin(), &directory.CallOpts{Version: directory.V1})
	fmt.Println(directory.ClassOf(err), directory.RetryAfterOf(err))
	fmt.Println(err)
	// Output:
	// retryable 1h0m0s
	// directory: v1 register: HTTP 429 rate_limited (retry after 1h0m0s)
}

func ExampleParseConfig() {
	yaml := []byte(`DIRECTORIES:
  - origin: https://directory.argentwolf.org
    enabled: true
  - origin: https://directory.example.org
DIRECTORY_SCHEDULER_ENABLED: false
DIRECTORY_PROFILE:
  participation_mode: open
  languages: [fr, en, en]
  contact_url: http://relay.example/contact
`)
	s, warnings, err := directory.ParseConfig(yaml, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range s.Directories {
		fmt.Println(e.Origin, e.Enabled)
	}
	fmt.Println(s.Profile.Languages, s.Profile.ContactURL == "")
	for _, w := range warnings {
		fmt.Println(w)
	}
	_, _, err = directory.ParseConfig(yaml, &directory.LoadOpts{Strict: true})
	fmt.Println(errors.Is(err, directory.ErrStrictWarnings))
	// Output:
	// https://directory.argentwolf.org true
	// https://directory.example.org false
	// [en fr] true
	// line 9: DIRECTORY_PROFILE.contact_url: not a canonical HTTPS URL (treated as unset)
	// true
}

func ExampleLoadEnv() {
	env := map[string]string{
		"DIRECTORIES":       "[{origin: https://directory.example, enabled: true}]",
		"DIRECTORY_PROFILE": "{participation_mode: closed, topics: [music]}",
	}
	s, _, err := directory.LoadEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Directories[0].Origin, s.Profile.ParticipationMode, s.Profile.Topics, s.SchedulerEnabled)
	// Output: https://directory.example closed [music] false
}

func ExampleParseOrigin() {
	for _, s := range []string{"https://directory.example", "https://directory.example/", "https://directory.example:443"} {
		_, err := directory.ParseOrigin(s)
		fmt.Println(err == nil)
	}
	// Output:
	// true
	// false
	// false
}

func ExampleProfile_Normalize() {
	p, err := directory.Profile{Languages: []string{" fr", "en", "fr"}, Notes: " hi "}.Normalize()
	if err != nil {
		log.Fatal(err)
	}
	b, _ := p.MarshalJSON()
	fmt.Println(string(b))
	// Output: {"participation_mode":"","availability":"","relay_type":"","languages":["en","fr"],"countries":[],"regions":[],"topics":[],"contact_fediverse":"","contact_email":"","contact_url":"","participation_url":"","notes":"hi"}
}

func ExampleProfile_Sanitize() {
	p, warnings := directory.Profile{ContactEmail: "Relay <relay@example.com>", Notes: "ok"}.Sanitize()
	fmt.Printf("%q %q %s\n", p.ContactEmail, p.Notes, warnings[0].Field)
	// Output: "" "ok" contact_email
}

func ExampleProfile_Digest() {
	a := directory.Profile{Languages: []string{"en", "fr"}}
	b := directory.Profile{Languages: []string{"fr", "en", "en"}}
	fmt.Println(a.Digest() == b.Digest(), len(a.Digest()))
	// Output: true 64
}

func ExampleParseStatus() {
	doc := []byte(`{"enrollment_open":false,"lifecycle_available":true,"lifecycle_enabled":true,"public_base_url":"https://directory.example","public_listing_available":true,"public_listing_enabled":true,"schema_version":3,"service":"activity-relay-directory","version":"1.2.0"}`)
	st, err := directory.ParseStatus(doc, "https://directory.example")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Negotiate(), st.EnrollmentOpen)
	_, err = directory.ParseStatus(doc, "https://other.example")
	fmt.Println(err)
	// Output:
	// v1 false
	// directory: invalid response (HTTP 200): status public_base_url mismatch
}

func ExampleClientConfig() {
	cfg := directory.ClientConfig()
	hc, err := client.New(cfg) // pass as directory.Config.HTTP, or let New build it
	fmt.Println(err, hc != nil, cfg.MaxBodyBytes, cfg.Timeout)
	fmt.Println(directory.AddressAllowed(netip.MustParseAddr("10.1.2.3")), directory.AddressAllowed(netip.MustParseAddr("127.0.0.1")))
	// Output:
	// <nil> true 16384 15s
	// true false
}

func ExampleParseState() {
	s, err := directory.ParseState("heartbeat-current")
	fmt.Println(s, err, directory.States())
	// Output: heartbeat-current <nil> [configured registered heartbeat-current retrying disabled unregister-pending]
}

func mustRead(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	return b
}

func ExampleClient_SetDirectories() {
	c, d := exampleClient()
	// After a configuration reload that disabled the entry: no lifecycle
	// traffic except unregister.
	c.SetDirectories([]directory.Entry{{Origin: d.Origin(), Enabled: false}})
	_, err := c.Heartbeat(context.Background(), d.Origin(), nil)
	fmt.Println(errors.Is(err, directory.ErrDisabled))
	res, _ := c.Unregister(context.Background(), d.Origin(), &directory.CallOpts{Version: directory.V1})
	fmt.Println(res.Outcome)
	// Output:
	// true
	// absent
}
