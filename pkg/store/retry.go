package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"payments/pkg/contention"
	"payments/pkg/idempotency"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// RetryPolicy is the one conflict-retry policy (contention.Policy), which
// the domain's loops share. A write is tried again when DynamoDB cancels
// it for a conflict with another transaction (or, for an optimistic
// read-modify-write such as the rate limiter's, when its condition on what
// it read fails: errRetry). What still loses is contention.ErrConflict.
type RetryPolicy = contention.Policy

// DefaultRetry is the policy of a DB made by New (contention.Retry).
var DefaultRetry = contention.Retry

// errRetry is what an attempt returns when it lost a race and may be tried
// again from a fresh read.
var errRetry = errors.New("store: lost a race")

// retry runs attempt under p: again while it returns errRetry or a
// transaction conflict, at most p.Attempts times.
func retry(ctx context.Context, p RetryPolicy, what string, attempt func(context.Context) error) error {
	lost := func(err error) bool { return errors.Is(err, errRetry) || transactionConflict(err) }
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

// txn is a transaction being built: each item has a name, so that the
// reasons of a cancellation are read by name, never by position.
type txn struct {
	names []string
	items []types.TransactWriteItem
	// held is the Idempotency-Key whose effect t records (recordEffect).
	held *idempotency.Held
}

// add appends item under name.
func (t *txn) add(name string, item types.TransactWriteItem) {
	t.names = append(t.names, name)
	t.items = append(t.items, item)
}

// cancellation holds the reason code of each item of a cancelled
// transaction, by item name ("None", "ConditionalCheckFailed",
// "TransactionConflict", …).
type cancellation map[string]string

// failed reports whether the condition of item name failed.
func (c cancellation) failed(name string) bool { return c[name] == "ConditionalCheckFailed" }

// failedNames lists the items whose condition failed, for error texts.
func (c cancellation) failedNames() string {
	var out []string
	for name, code := range c {
		if code == "ConditionalCheckFailed" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// cancellationOf returns the reasons of err by the names of t's items, and
// false when err is not a cancellation of t.
func (t *txn) cancellationOf(err error) (cancellation, bool) {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) != len(t.names) {
		return nil, false
	}
	c := make(cancellation, len(t.names))
	for i, r := range tce.CancellationReasons {
		c[t.names[i]] = aws.ToString(r.Code)
	}
	return c, true
}

// transactionConflict reports whether err is a write that lost a race with
// a transaction on the same items and can be tried again as it is.
func transactionConflict(err error) bool {
	var tce *types.TransactionConflictException
	if errors.As(err, &tce) {
		return true
	}
	var canceled *types.TransactionCanceledException
	if errors.As(err, &canceled) {
		for _, r := range canceled.CancellationReasons {
			if aws.ToString(r.Code) == "TransactionConflict" {
				return true
			}
		}
	}
	return false
}

// write commits a transaction under the retry policy. Each try calls build
// (which may read afresh) for the items; when DynamoDB cancels for a
// condition, refused reads the reasons by item name and returns the error
// to answer, or nil when no condition it knows failed (an error naming the
// failed items is returned). A conflict with another transaction is tried
// again.
func (db *DB) write(ctx context.Context, what string, build func(context.Context) (*txn, error), refused func(context.Context, cancellation) error) error {
	return retry(ctx, db.Retry, what, func(ctx context.Context) error {
		t, err := build(ctx)
		if err != nil {
			return err
		}
		_, err = db.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: t.items})
		if err == nil {
			if t.held != nil {
				t.held.Recorded()
			}
			return nil
		}
		c, ok := t.cancellationOf(err)
		if !ok || transactionConflict(err) {
			return fmt.Errorf("store: %s: %w", what, err)
		}
		if c.failed(effectItem) {
			return fmt.Errorf("store: %s: %w", what, idempotency.ErrLeaseLost)
		}
		if err := refused(ctx, c); err != nil {
			return err
		}
		return fmt.Errorf("store: %s: condition of %s failed", what, c.failedNames())
	})
}

// writeOnce is write for a transaction whose items do not depend on a read.
func (db *DB) writeOnce(ctx context.Context, what string, t *txn, refused func(context.Context, cancellation) error) error {
	return db.write(ctx, what, func(context.Context) (*txn, error) { return t, nil }, refused)
}

// update runs one UpdateItem under the retry policy (an item inside another
// transaction answers TransactionConflictException). A failed condition is
// returned as *types.ConditionalCheckFailedException for conditionFailed.
func (db *DB) update(ctx context.Context, what string, in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
	var out *dynamodb.UpdateItemOutput
	err := retry(ctx, db.Retry, what, func(ctx context.Context) error {
		var err error
		out, err = db.Client.UpdateItem(ctx, in)
		return err
	})
	if err != nil && !conditionFailed(err) && !errors.Is(err, contention.ErrConflict) {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	return out, err
}

// put runs one PutItem under the retry policy; see update.
func (db *DB) put(ctx context.Context, what string, in *dynamodb.PutItemInput) error {
	err := retry(ctx, db.Retry, what, func(ctx context.Context) error {
		_, err := db.Client.PutItem(ctx, in)
		return err
	})
	if err != nil && !conditionFailed(err) && !errors.Is(err, contention.ErrConflict) {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	return err
}
