package dynamo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/deadline"
)

// Txn is a transaction being built: each item has a name, so that the
// reasons of a cancellation are read by name, never by position. Its items
// count against the item budget of the DB that writes it
// (DB.MaxTransactItems). The zero Txn is empty and ready to use.
type Txn struct {
	names []string
	items []types.TransactWriteItem
}

// Add appends item under name.
func (t *Txn) Add(name string, item types.TransactWriteItem) {
	t.names = append(t.names, name)
	t.items = append(t.items, item)
}

// Clone returns a copy of t that items added to either do not reach the
// other.
func (t *Txn) Clone() *Txn {
	return &Txn{names: slices.Clone(t.names), items: slices.Clone(t.items)}
}

// Len returns the number of items in t.
func (t *Txn) Len() int { return len(t.items) }

// Item returns the item added under name, nil when there is none.
func (t *Txn) Item(name string) *types.TransactWriteItem {
	if i := slices.Index(t.names, name); i >= 0 {
		return &t.items[i]
	}
	return nil
}

// Cancellation holds the reason code of each item of a cancelled
// transaction, by item name ("None", "ConditionalCheckFailed",
// "TransactionConflict", …).
type Cancellation map[string]string

// Failed reports whether the condition of item name failed.
func (c Cancellation) Failed(name string) bool { return c[name] == "ConditionalCheckFailed" }

// failedNames lists the items whose condition failed, for error texts.
func (c Cancellation) failedNames() string {
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
func (t *Txn) cancellationOf(err error) (Cancellation, bool) {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) != len(t.names) {
		return nil, false
	}
	c := make(Cancellation, len(t.names))
	for i, r := range tce.CancellationReasons {
		c[t.names[i]] = aws.ToString(r.Code)
	}
	return c, true
}

// TransactionConflict reports whether err is a write that lost a race with
// a transaction on the same items and can be tried again as it is.
func TransactionConflict(err error) bool {
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

// ErrNoTimeToCommit is a transaction not sent because its context's
// deadline leaves less than deadline.CommitTime: sent, it could be cut
// off with its outcome unknown. Nothing is written; it is a
// context.DeadlineExceeded, which callers answer as a time-out.
var ErrNoTimeToCommit = fmt.Errorf("too little time left to commit: %w", context.DeadlineExceeded)

// Write commits a transaction under the retry policy. Each try calls build
// (which may read afresh) for the items; a transaction past the item budget
// is refused before it is sent, as is one with too little time left
// (ErrNoTimeToCommit). When DynamoDB cancels for a condition,
// refused reads the reasons by item name and returns the error to answer,
// or nil when no condition it knows failed (an error naming the failed
// items is returned). A conflict with another transaction is tried again.
func (db *DB) Write(ctx context.Context, what string, build func(context.Context) (*Txn, error), refused func(context.Context, Cancellation) error) error {
	return Retry(ctx, db.Retry, what, func(ctx context.Context) error {
		t, err := build(ctx)
		if err != nil {
			return err
		}
		if t.Len() > db.MaxTransactItems {
			return fmt.Errorf("store: %s: %d items, past the budget of %d a transaction", what, t.Len(), db.MaxTransactItems)
		}
		if !deadline.Enough(ctx, deadline.CommitTime) {
			return fmt.Errorf("store: %s: %w", what, ErrNoTimeToCommit)
		}
		_, err = db.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: t.items})
		if err == nil {
			return nil
		}
		c, ok := t.cancellationOf(err)
		if !ok || TransactionConflict(err) {
			return fmt.Errorf("store: %s: %w", what, err)
		}
		if err := refused(ctx, c); err != nil {
			return err
		}
		return fmt.Errorf("store: %s: condition of %s failed", what, c.failedNames())
	})
}

// WriteOnce is Write for a transaction whose items do not depend on a read.
func (db *DB) WriteOnce(ctx context.Context, what string, t *Txn, refused func(context.Context, Cancellation) error) error {
	return db.Write(ctx, what, func(context.Context) (*Txn, error) { return t, nil }, refused)
}
