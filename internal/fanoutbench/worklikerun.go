package fanoutbench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fedkit/fedkit/deliver/driver"
)

// WorkLikeRun works q as Deliverer.Run does, with sends that cost nothing:
// at most conc jobs in flight, claiming as many as there are free slots,
// each job finished as delivered by its own goroutine. It returns once the
// queue is empty, with how many jobs it worked and the first error. Queue
// throughput benchmarks use it so that every backend, and a job queue it is
// compared with, is worked the same way.
func WorkLikeRun(ctx context.Context, q driver.Queue, conc int) (int64, error) {
	slots := make(chan struct{}, conc)
	var wg sync.WaitGroup
	var n atomic.Int64
	var errOnce sync.Once
	var firstErr error
	fail := func(err error) { errOnce.Do(func() { firstErr = err }) }
	for {
		slots <- struct{}{}
		free := 1
	fill:
		for free < conc {
			select {
			case slots <- struct{}{}:
				free++
			default:
				break fill
			}
		}
		jobs, err := q.Claim(ctx, driver.ClaimOpts{Now: time.Now(), Lease: time.Minute, Limit: free})
		if err != nil {
			fail(err)
		}
		for range free - len(jobs) {
			<-slots
		}
		if len(jobs) == 0 {
			// One claimer and every job due: nothing left but what is in flight.
			wg.Wait()
			return n.Load(), firstErr
		}
		for _, j := range jobs {
			wg.Go(func() {
				defer func() { <-slots }()
				if err := q.Finish(ctx, j.Ref(), driver.Outcome{Result: driver.ResultDelivered, Attempts: 1}); err != nil {
					fail(err)
					return
				}
				n.Add(1)
			})
		}
	}
}
