package config_test

import (
	"errors"
	"testing"

	"github.com/fedkit/fedkit/examples/relay/internal/config"
)

func TestRateLimitKeys(t *testing.T) {
	c, err := config.Parse([]byte("RATE_LIMIT_PER_MINUTE: 30\nRATE_LIMIT_BURST: 5\nRATE_LIMIT_DISABLED: true\n"), "/x/config.yml", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.RateLimitPerMinute != 30 || c.RateLimitBurst != 5 || !c.RateLimitDisabled {
		t.Fatalf("rate limit = %d/min burst %d disabled %v", c.RateLimitPerMinute, c.RateLimitBurst, c.RateLimitDisabled)
	}
	for name, y := range map[string]string{
		"negative rate":  "RATE_LIMIT_PER_MINUTE: -1\n",
		"negative burst": "RATE_LIMIT_BURST: -1\n",
		"huge rate":      "RATE_LIMIT_PER_MINUTE: 100000000\n",
	} {
		if _, err := config.Parse([]byte(y), "/x/config.yml", nil, nil); !errors.Is(err, config.ErrInvalid) {
			t.Errorf("%s: %v; want ErrInvalid", name, err)
		}
	}
	env := map[string]string{"RATE_LIMIT_PER_MINUTE": "120", "RATE_LIMIT_BURST": "10", "RATE_LIMIT_DISABLED": "false"}
	c, err = config.FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, nil)
	if err != nil || c.RateLimitPerMinute != 120 || c.RateLimitBurst != 10 || c.RateLimitDisabled {
		t.Fatalf("from the environment: %+v, %v", c, err)
	}
}
