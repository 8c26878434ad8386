package dynamo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"payments/pkg/contention"
)

// RetryPolicy is the one conflict-retry policy of the table's writes. A
// write is tried again when DynamoDB cancels it for a conflict with another
// transaction (or, for an optimistic read-modify-write such as the rate
// limiter's, when its condition on what it read fails: ErrRetry); it is
// tried at most Attempts times, waiting before try n a random time of up to
// Base·2^(n−2), at most Max, and never past the context's deadline. What
// still loses is contention.ErrConflict.
type RetryPolicy struct {
	Attempts  int
	Base, Max time.Duration
}

// DefaultRetry is the policy of a DB made by New: 5 tries within about
// 150 ms at worst.
var DefaultRetry = RetryPolicy{Attempts: 5, Base: 10 * time.Millisecond, Max: 80 * time.Millisecond}

// ErrRetry is what an attempt returns when it lost a race and may be tried
// again from a fresh read.
var ErrRetry = errors.New("store: lost a race")

// Do runs attempt under p: again while it returns ErrRetry or a transaction
// conflict, at most p.Attempts times.
func (p RetryPolicy) Do(ctx context.Context, what string, attempt func(context.Context) error) error {
	for n := 1; ; n++ {
		err := attempt(ctx)
		if err == nil || !(errors.Is(err, ErrRetry) || TransactionConflict(err)) {
			return err
		}
		if n >= p.Attempts {
			return fmt.Errorf("store: %s: lost %d times: %w", what, n, contention.ErrConflict)
		}
		wait := p.wait(n)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return fmt.Errorf("store: %s: no time left to retry: %w", what, contention.ErrConflict)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// wait returns the jittered back-off before try n+1.
func (p RetryPolicy) wait(n int) time.Duration {
	ceiling := min(p.Base<<(n-1), p.Max)
	if ceiling <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(ceiling)) + 1)
}
