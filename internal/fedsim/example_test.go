package fedsim_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/internal/fedsim"
)

// One listener plays every host; a client resolving every name to it
// reaches each host's profile by name.
func Example() {
	sim, err := fedsim.New(&fedsim.Config{Default: fedsim.Healthy(10*time.Millisecond, 0)})
	if err != nil {
		panic(err)
	}
	defer sim.Close()
	sim.SetHost("gone.example", fedsim.Gone(0))
	c, err := client.New(&client.Config{AllowPrivate: fedsim.Loopback, Resolver: sim.Resolver()})
	if err != nil {
		panic(err)
	}
	for _, host := range []string{"up.example", "gone.example"} {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, sim.URL(host, "/inbox"), strings.NewReader("{}"))
		resp, err := c.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println(host, resp.StatusCode, sim.Stats(host).Received)
	}
	// Output:
	// up.example 202 1
	// gone.example 410 1
}
