package directorytest_test

import (
	"testing"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/directorytest"
)

func TestMemoryStateStore(t *testing.T) {
	t.Parallel()
	directorytest.TestStateStore(t, func(testing.TB) directory.StateStore { return &directory.MemoryStateStore{} })
}
