package directory_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/fedkit/fedkit/directory"
)

// After a configuration reload, the next register sends the new profile;
// the Scheduler does this on every wake from DIRECTORY_PROFILE in its file.
func ExampleClient_SetProfile() {
	c, d := exampleClient()
	before := c.ProfileDigest()
	if err := c.SetProfile(directory.Profile{ParticipationMode: "closed", Notes: "Members only"}); err != nil {
		fmt.Println(err)
	}
	res, err := c.Register(context.Background(), d.Origin(), nil)
	reg, _ := d.Registration("https://relay.example/actor")
	fmt.Println(err, res.ProfileDigest == c.ProfileDigest(), before != c.ProfileDigest(), reg.Profile.ParticipationMode)
	// Output: <nil> true true closed
}

// A Directory whose status document reports its lifecycle service off gets
// no signed request at all.
func ExampleLifecycleOffError() {
	c, d := exampleClient()
	d.SetLifecycleAvailable(false)
	_, err := c.Register(context.Background(), d.Origin(), nil)
	var lo *directory.LifecycleOffError
	fmt.Println(errors.As(err, &lo), lo.Enabled, directory.ClassOf(err) == directory.ClassPermanent, len(d.Requests()))
	// Output: true false true 0
}
