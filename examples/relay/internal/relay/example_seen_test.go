package relay_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fedkit/fedkit/examples/relay/internal/relay"
)

// A MemorySeen answers, for each key, whether it is new within its window;
// the relay marks each activity id it relays, and relays it only if new.
func ExampleNewMemorySeen() {
	seen := relay.NewMemorySeen(&relay.MemorySeenConfig{MaxEntries: 1000})
	ctx := context.Background()
	first, _ := seen.Mark(ctx, "activity:1", time.Hour)
	again, _ := seen.Mark(ctx, "activity:1", time.Hour)
	fmt.Println(first, again)
	// Output: true false
}
