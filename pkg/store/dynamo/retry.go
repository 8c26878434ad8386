package dynamo

import (
	"context"
	"errors"
	"fmt"

	"payments/pkg/contention"
)

// ErrRetry is what an attempt returns when it lost a race and may be tried
// again from a fresh read.
var ErrRetry = errors.New("store: lost a race")

// Retry runs attempt under p, the one conflict-retry policy
// (contention.Policy), which the domain's loops share: again while it
// returns ErrRetry (an optimistic read-modify-write, such as the rate
// limiter's, whose condition on what it read failed) or a transaction
// conflict, at most p.Attempts times. What still loses is
// contention.ErrConflict.
func Retry(ctx context.Context, p contention.Policy, what string, attempt func(context.Context) error) error {
	lost := func(err error) bool { return errors.Is(err, ErrRetry) || TransactionConflict(err) }
	n, err := p.Do(ctx, func(ctx context.Context) (bool, error) {
		err := attempt(ctx)
		return lost(err), err
	})
	switch {
	case !lost(err):
		return err
	case n >= p.Attempts:
		return fmt.Errorf("store: %s: lost %d times: %w", what, n, contention.ErrConflict)
	}
	return fmt.Errorf("store: %s: no time left to retry: %w", what, contention.ErrConflict)
}
