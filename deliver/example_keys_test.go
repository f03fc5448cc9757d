package deliver_test

import (
	"context"
	"crypto"
	"fmt"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/sig"
)

// countedKeys counts the loads that reach the key table.
type countedKeys struct {
	appKeys
	loads int
}

func (k *countedKeys) Key(ctx context.Context, keyID string) (crypto.Signer, error) {
	k.loads++
	return k.appKeys.Key(ctx, keyID)
}

func ExampleNewCachingSenderKeys() {
	table := &countedKeys{}
	keys := deliver.NewCachingSenderKeys(table, &deliver.CachingConfig{TTL: 10 * time.Minute})
	_, _ = keys.Key(context.Background(), "https://a.example/users/alice#main-key")
	_, _ = keys.Key(context.Background(), "https://a.example/users/alice#main-key")
	fmt.Println(table.loads)
	// Output: 1
}

func ExampleCachingSenderKeys_Forget() {
	table := &countedKeys{}
	keys := deliver.NewCachingSenderKeys(table, &deliver.CachingConfig{TTL: time.Hour})
	ctx := context.Background()
	_, _ = keys.Key(ctx, "https://a.example/users/alice#main-key")
	keys.Forget("https://a.example/users/alice#main-key") // rotated: load the new key next time
	_, _ = keys.Key(ctx, "https://a.example/users/alice#main-key")
	fmt.Println(table.loads)
	// Output: 2
}

func ExampleSingleKey() {
	key, _ := sig.LoadOrGenerateKey("actor.pem", sig.KeyRSA2048)
	c, _ := client.New(nil)
	d, _ := deliver.New(&deliver.MemoryQueue{}, deliver.SingleKey{KeyID: "https://social.example/actor#main-key", Signer: key}, c, nil)
	_ = d
}

func ExampleSenderKeysFunc() {
	keys := deliver.SenderKeysFunc(func(ctx context.Context, keyID string) (crypto.Signer, error) {
		return loadKeyFromMyTable(ctx, keyID)
	})
	c, _ := client.New(nil)
	d, _ := deliver.New(&deliver.MemoryQueue{}, deliver.NewCachingSenderKeys(keys, nil), c, nil)
	_ = d
}

func loadKeyFromMyTable(context.Context, string) (crypto.Signer, error) { return nil, nil }
