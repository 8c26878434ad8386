// Package dynamo is the small DynamoDB toolkit every adapter on the table
// uses: our store (package store) and the simulated providers' own stores.
// It knows nothing of what the items mean:
//
//   - DB: the client, the table, the retry policy and the item budget of a
//     transaction (MaxTransactItems);
//   - reads of one item: Find (found or not) and Get (a missing item is
//     the caller's sentinel);
//   - writes: Put and Update for one item, Txn and Write for a transaction
//     whose items have names, so that the reasons of a cancellation are read
//     by name; all of them under the one retry policy (Retry);
//   - lists: ReadPage, a page at a time, of a Listing with its Filter;
//   - values: Key, Str, Num, StringAttr, DecodeAll.
//
// What is in the table (keys, indexes, item kinds) is package store's
// schema, or a simulated provider's own.
package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"payments/pkg/contention"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Item budgets of one TransactWriteItems.
const (
	// MaxTransactItems is the most items DynamoDB accepts in one
	// transaction.
	MaxTransactItems = 100
	// LocalTransactItems is DynamoDB Local 1.11's limit, DynamoDB's
	// former one.
	LocalTransactItems = 10
)

// DB is a table and the client that reaches it.
type DB struct {
	Client *dynamodb.Client
	Table  string
	// Retry is the conflict-retry policy of every write (contention.Retry).
	Retry contention.Policy
	// MaxTransactItems is the item budget of one transaction: the most
	// items one TransactWriteItems may hold. A write whose size varies (a
	// credit that pays debts) keeps within it; Write refuses a Txn past it.
	MaxTransactItems int
}

// New returns a DB for table through client, with contention.Retry. Its item
// budget is MaxTransactItems, or LocalTransactItems when the client has an
// endpoint of its own (DynamoDB Local).
func New(client *dynamodb.Client, table string) *DB {
	db := &DB{Client: client, Table: table, Retry: contention.Retry, MaxTransactItems: MaxTransactItems}
	if client != nil && client.Options().BaseEndpoint != nil {
		db.MaxTransactItems = LocalTransactItems
	}
	return db
}

// Key returns the primary key (PK, SK) of an item.
func Key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: pk},
		"SK": &types.AttributeValueMemberS{Value: sk},
	}
}

// Str returns s as a DynamoDB string.
func Str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

// Num returns n as a DynamoDB number.
func Num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// Bool returns b as a DynamoDB boolean.
func Bool(b bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: b} }

// StringAttr returns the string attribute name of item, "" when it has
// none.
func StringAttr(item map[string]types.AttributeValue, name string) string {
	if s, ok := item[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// DecodeAll unmarshals each item into an I and turns it into a T with
// convert (an item type's conversion method, such as walletItem.wallet).
func DecodeAll[I, T any](items []map[string]types.AttributeValue, convert func(I) (T, error)) ([]T, error) {
	out := make([]T, 0, len(items))
	for _, raw := range items {
		var it I
		if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
			return nil, fmt.Errorf("store: decode item: %w", err)
		}
		v, err := convert(it)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// ConditionFailed reports whether err is a failed condition of a
// single-item write (Put, Update).
func ConditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// Find reads the item (pk, sk), strongly consistent, into out and reports
// whether it exists.
func (db *DB) Find(ctx context.Context, pk, sk string, out any) (bool, error) {
	res, err := db.Client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(db.Table),
		Key:            Key(pk, sk),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return false, err
	}
	if res.Item == nil {
		return false, nil
	}
	if err := attributevalue.UnmarshalMap(res.Item, out); err != nil {
		return false, fmt.Errorf("decode: %w", err)
	}
	return true, nil
}

// Get reads the item (pk, sk), strongly consistent, into out. When there is
// no such item it returns missing, the caller's sentinel (such as
// payments.ErrNotFound); a failed read is an error that names what.
func (db *DB) Get(ctx context.Context, what, pk, sk string, out any, missing error) error {
	found, err := db.Find(ctx, pk, sk, out)
	switch {
	case err != nil:
		return fmt.Errorf("store: get %s: %w", what, err)
	case !found:
		return missing
	}
	return nil
}

// Update runs one UpdateItem under the retry policy (an item inside another
// transaction answers TransactionConflictException). A failed condition is
// returned as *types.ConditionalCheckFailedException for ConditionFailed.
func (db *DB) Update(ctx context.Context, what string, in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
	var out *dynamodb.UpdateItemOutput
	err := Retry(ctx, db.Retry, what, func(ctx context.Context) error {
		var err error
		out, err = db.Client.UpdateItem(ctx, in)
		return err
	})
	if err != nil && !ConditionFailed(err) && !errors.Is(err, contention.ErrConflict) {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	return out, err
}

// Put runs one PutItem under the retry policy; see Update.
func (db *DB) Put(ctx context.Context, what string, in *dynamodb.PutItemInput) error {
	err := Retry(ctx, db.Retry, what, func(ctx context.Context) error {
		_, err := db.Client.PutItem(ctx, in)
		return err
	})
	if err != nil && !ConditionFailed(err) && !errors.Is(err, contention.ErrConflict) {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	return err
}
