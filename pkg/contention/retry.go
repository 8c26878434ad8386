package contention

import (
	"context"
	"math/rand/v2"
	"time"

	"payments/pkg/metrics"
)

// Policy is the one retry policy of a write that loses a race with other
// writes: the store's, when DynamoDB cancels a transaction for a conflict
// or a condition on what it read fails, and the domain's, when a record
// changed between its read and its write. A write is tried at most
// Attempts times, waiting before try n a random time of up to
// Base·2^(n−2), at most Max, and never past the context's deadline.
type Policy struct {
	Attempts  int
	Base, Max time.Duration
}

// Retry is the policy of the store's writes and of the domain's loops
// that write again from fresh reads: 5 tries within about 150 ms at worst.
var Retry = Policy{Attempts: 5, Base: 10 * time.Millisecond, Max: 80 * time.Millisecond}

// Do calls attempt until it answers not to try again, at most p.Attempts
// times, waiting p.Wait(n) after try n. attempt returns its error and
// whether it lost a race and may be tried again from fresh reads. Do
// returns the number of tries and the last try's error, also when the
// tries ran out or the context's deadline leaves no time for the wait
// (the caller tells a race lost for good from its error); the context's
// error when it ends during a wait. Each try again is counted
// (ConflictsRetried), and so is a race lost for good (ConflictsGivenUp):
// a store write's give-up inside a domain's loop counts once, and the
// loop may then try again from fresh reads.
func (p Policy) Do(ctx context.Context, attempt func(context.Context) (again bool, err error)) (tries int, err error) {
	for n := 1; ; n++ {
		again, err := attempt(ctx)
		if !again {
			return n, err
		}
		wait := p.Wait(n)
		if dl, ok := ctx.Deadline(); n >= p.Attempts || ok && time.Until(dl) < wait {
			metrics.Count(ctx, metrics.ConflictsGivenUp)
			return n, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			metrics.Count(ctx, metrics.ConflictsGivenUp)
			return n, ctx.Err()
		case <-t.C:
		}
		metrics.Count(ctx, metrics.ConflictsRetried)
	}
}

// Wait returns the jittered back-off after try n.
func (p Policy) Wait(n int) time.Duration {
	ceiling := min(p.Base<<(n-1), p.Max)
	if ceiling <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(ceiling)) + 1)
}
