package deliver_test

import (
	"context"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/colsync"
)

// followersTable stands for an application's follows table.
type followersTable struct{}

func (followersTable) FollowersOn(ctx context.Context, actorID, origin string) (colsync.Followers, error) {
	return colsync.Followers{
		CollectionID: actorID + "/followers",
		URL:          actorID + "/followers_synchronization",
		IDs:          []string{origin + "/users/bob"}, // SELECT ... WHERE uri LIKE origin || '/%'
	}, nil
}

func ExampleFollowersSource() {
	cfg := deliver.DefaultConfig()
	cfg.Followers = followersTable{}
	_ = cfg
}
