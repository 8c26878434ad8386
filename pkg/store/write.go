package store

import (
	"context"
	"fmt"

	"payments/pkg/idempotency"
	"payments/pkg/store/dynamo"
)

// txn is a transaction of our store: the toolkit's, and the
// Idempotency-Key whose effect it records (recordEffect).
type txn struct {
	dynamo.Txn
	held *idempotency.Held
}

// write commits a transaction with dynamo.DB.Write: each try calls build
// (which may read afresh) for the items; when DynamoDB cancels for a
// condition, refused reads the reasons by item name and returns the error
// to answer. A refused effect (the request no longer holds its
// Idempotency-Key) is idempotency.ErrLeaseLost; a commit marks the effect
// recorded.
func (db *DB) write(ctx context.Context, what string, build func(context.Context) (*txn, error), refused func(context.Context, dynamo.Cancellation) error) error {
	var last *txn
	err := db.Write(ctx, what, func(ctx context.Context) (*dynamo.Txn, error) {
		t, err := build(ctx)
		if err != nil {
			return nil, err
		}
		last = t
		return &t.Txn, nil
	}, func(ctx context.Context, c dynamo.Cancellation) error {
		if c.Failed(effectItem) {
			return fmt.Errorf("store: %s: %w", what, idempotency.ErrLeaseLost)
		}
		return refused(ctx, c)
	})
	if err == nil && last.held != nil {
		last.held.Recorded()
	}
	return err
}

// writeOnce is write for a transaction whose items do not depend on a read.
func (db *DB) writeOnce(ctx context.Context, what string, t *txn, refused func(context.Context, dynamo.Cancellation) error) error {
	return db.write(ctx, what, func(context.Context) (*txn, error) { return t, nil }, refused)
}
