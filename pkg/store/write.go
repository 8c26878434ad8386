package store

import (
	"context"
	"errors"
	"fmt"

	"payments/pkg/contention"
	"payments/pkg/idempotency"
	"payments/pkg/store/dynamo"
)

// Txn is a transaction of our store: the toolkit's, the Idempotency-Key
// whose effect it records (RecordEffect) and the events it emits
// (AddEvent), which Commit numbers at each try (sequenced).
type Txn struct {
	dynamo.Txn
	held   *idempotency.Held
	events []objectEvent
	// created holds the objects t creates (Txn.Creates): no event about
	// them precedes t's, so their counters are not read.
	created map[string]bool
	// counted holds the objects whose counter t's own items keep, with the
	// number read (Txn.Counts).
	counted map[string]int64
}

// Commit commits a transaction with dynamo.DB.Write: each try calls build
// (which may read afresh) for the items, and numbers its events
// (sequenced); when DynamoDB cancels for a condition, refused reads the
// reasons by item name and returns the error to answer. A refused effect
// (the request no longer holds its Idempotency-Key) is
// idempotency.ErrLeaseLost; a counter another change of the object moved
// first is a race lost, whatever else failed with it, written again from a
// fresh build (which reads every condition afresh) up to sequenceAttempts
// times under the store's policy, then contention.ErrConflict. A commit marks the effect recorded.
func (db *DB) Commit(ctx context.Context, what string, build func(context.Context) (*Txn, error), refused func(context.Context, dynamo.Cancellation) error) error {
	var last *Txn
	policy := db.Retry
	policy.Attempts = max(policy.Attempts, sequenceAttempts)
	n, err := policy.Do(ctx, func(ctx context.Context) (bool, error) {
		err := db.Write(ctx, what, func(ctx context.Context) (*dynamo.Txn, error) {
			t, err := build(ctx)
			if err != nil {
				return nil, err
			}
			last = t
			return db.sequenced(ctx, t)
		}, func(ctx context.Context, c dynamo.Cancellation) error {
			if c.Failed(effectItem) {
				return fmt.Errorf("store: %s: %w", what, idempotency.ErrLeaseLost)
			}
			if counterRaced(c) {
				// Whatever else failed is read again from a fresh build.
				return errSequenceRaced
			}
			return refused(ctx, c)
		})
		return errors.Is(err, errSequenceRaced), err
	})
	if errors.Is(err, errSequenceRaced) {
		return fmt.Errorf("store: %s: lost the event sequence %d times: %w", what, n, contention.ErrConflict)
	}
	if err == nil && last.held != nil {
		last.held.Recorded()
	}
	return err
}

// CommitOnce is Commit for a transaction whose items do not depend on a read.
func (db *DB) CommitOnce(ctx context.Context, what string, t *Txn, refused func(context.Context, dynamo.Cancellation) error) error {
	return db.Commit(ctx, what, func(context.Context) (*Txn, error) { return t, nil }, refused)
}
