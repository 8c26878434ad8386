// Package store is the DynamoDB single-table implementation of the store
// interfaces the domain packages declare.
//
// Every item a company owns has a partition key that starts with
// "COMPANY#<company id>", and every read of company data is built from the
// company id of the caller's token, so another company's item cannot be
// reached: it reads as not found. Keys are built only by the functions in
// keys.go.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"payments/pkg/ids"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DB is the table every store type works on.
type DB struct {
	Client *dynamodb.Client
	Table  string
	// Retry is the conflict-retry policy of every write (DefaultRetry).
	Retry RetryPolicy
	// MaxTransactItems is the most items one TransactWriteItems may hold.
	// A write whose size varies (a credit that pays debts) keeps within it.
	MaxTransactItems int
}

// New returns a DB for table through client. A transaction holds at most
// 100 items, or 10 when the client has an endpoint of its own (NewClient
// with an endpoint): DynamoDB Local 1.11 keeps DynamoDB's former limit.
func New(client *dynamodb.Client, table string) *DB {
	db := &DB{Client: client, Table: table, Retry: DefaultRetry, MaxTransactItems: 100}
	if client != nil && client.Options().BaseEndpoint != nil {
		db.MaxTransactItems = 10
	}
	return db
}

// NewClient returns a DynamoDB client for cfg. When endpoint is set (DynamoDB
// Local), response checksum validation is off: the emulator's error
// responses carry no valid CRC32.
func NewClient(cfg aws.Config, endpoint string) *dynamodb.Client {
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			o.DisableValidateResponseChecksum = true
		}
	})
}

// Attribute names shared by every item.
const (
	attrPK     = "PK"
	attrSK     = "SK"
	attrGSI1PK = "GSI1PK"
	attrGSI1SK = "GSI1SK"
	attrGSI2PK = "GSI2PK"
	attrGSI2SK = "GSI2SK"
	attrGSI3PK = "GSI3PK"
	attrGSI3SK = "GSI3SK"
	// AttrExpiresAt is the TTL attribute: epoch seconds after which DynamoDB
	// may delete the item.
	AttrExpiresAt = "expires_at"
)

// Index names.
const (
	GSI1 = "GSI1"
	GSI2 = "GSI2"
	GSI3 = "GSI3"
)

// TableDefinition is the one definition of the table: the local stack and
// the tests create it from here, and a test proves template.yaml declares the
// same keys and indexes.
func TableDefinition(name string) *dynamodb.CreateTableInput {
	str := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	key := func(pk, sk string) []types.KeySchemaElement {
		return []types.KeySchemaElement{
			{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange},
		}
	}
	gsi := func(name, pk, sk string) types.GlobalSecondaryIndex {
		return types.GlobalSecondaryIndex{
			IndexName:  aws.String(name),
			KeySchema:  key(pk, sk),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}
	}
	return &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			str(attrPK), str(attrSK), str(attrGSI1PK), str(attrGSI1SK), str(attrGSI2PK), str(attrGSI2SK),
			str(attrGSI3PK), str(attrGSI3SK),
		},
		KeySchema: key(attrPK, attrSK),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			gsi(GSI1, attrGSI1PK, attrGSI1SK),
			gsi(GSI2, attrGSI2PK, attrGSI2SK),
			gsi(GSI3, attrGSI3PK, attrGSI3SK),
		},
	}
}

// CreateTable creates the table from TableDefinition when it does not exist,
// waits until it is active and turns on TTL.
func (db *DB) CreateTable(ctx context.Context) error {
	_, err := db.Client.CreateTable(ctx, TableDefinition(db.Table))
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("store: create table %s: %w", db.Table, err)
	}
	w := dynamodb.NewTableExistsWaiter(db.Client)
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(db.Table)}, time.Minute); err != nil {
		return fmt.Errorf("store: wait for table %s: %w", db.Table, err)
	}
	_, err = db.Client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(db.Table),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(AttrExpiresAt), Enabled: aws.Bool(true),
		},
	})
	if err != nil && !isTTLAlreadyOn(err) {
		return fmt.Errorf("store: enable TTL on %s: %w", db.Table, err)
	}
	return nil
}

func isTTLAlreadyOn(err error) bool {
	var ve interface{ ErrorCode() string }
	return errors.As(err, &ve) && ve.ErrorCode() == "ValidationException"
}

// conditionFailed reports whether err is a failed condition of a single-item
// write.
func conditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// getItem reads the item (pk, sk), strongly consistent, into out and reports
// whether it exists.
func (db *DB) getItem(ctx context.Context, pk, sk string, out any) (bool, error) {
	res, err := db.Client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(db.Table),
		Key:            primaryKeyOf(pk, sk),
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

// timeRange returns the sort-key bounds, for BETWEEN, of the items keyed
// prefix + a UUID v7 whose time falls in [from, to); a zero time leaves
// that end open.
func timeRange(prefix string, from, to time.Time) (lo, hi string) {
	lo, hi = prefix, prefix[:len(prefix)-1]+string(prefix[len(prefix)-1]+1)
	if !from.IsZero() {
		lo = prefix + ids.V7Prefix(from.UnixMilli())
	}
	if !to.IsZero() {
		ms := to.UnixMilli()
		if to.After(time.UnixMilli(ms)) {
			ms++
		}
		hi = prefix + ids.V7Prefix(ms)
	}
	return lo, hi
}

// decodeAll unmarshals each item into an I and turns it into a T with
// convert (an item type's conversion method, such as walletItem.wallet).
func decodeAll[I, T any](items []map[string]types.AttributeValue, convert func(I) (T, error)) ([]T, error) {
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
