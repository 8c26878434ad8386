// Package store is the DynamoDB single-table implementation of the store
// interfaces the domain packages declare, split by scope: this package
// holds what every store shares and the stores a function that keeps no
// money needs, and imports no domain of money, so that such a function
// (auth, the API document) need link none; the stores of money are in
// package moneystore, the customers' in package customerstore, over this
// package's DB and toolkit.
//
// Every item a company owns has a partition key that starts with
// schema.CompanyPK(company id), and every read of company data is built from the
// company id of the caller's token, so another company's item cannot be
// reached: it reads as not found.
//
// The files:
//
//   - store.go: DB, the table every store type works on, and its creation;
//   - package schema: the table's definition and every attribute, index,
//     item kind, key and transaction item name of the items on it (ours and
//     the simulated providers'); keys are built only there;
//   - the toolkit: package dynamo (reads of one item with a sentinel for
//     a missing one, writes, transactions with named items and an item
//     budget, the paged read of every list, the one retry policy), which
//     the simulated providers' own stores use too; beside it, exported for
//     the stores beneath, write.go (Txn, a transaction that emits events
//     and records an Idempotency-Key's effect, effects.go, committed by
//     DB.Commit), sequence.go (the number of each event among the events
//     about its object), due.go (the sweeper's reads of the sharded
//     indexes), console.go (the console's lists) and update.go
//     (UpdateExpressions);
//   - one file per capability that keeps no money: companies.go,
//     ratelimits.go, buckets.go, idempotency.go, fees.go, outbox.go,
//     webhooks.go, webhooklog.go, webhook_endpoints.go;
//   - package moneystore: the wallets, their ledger and every write of
//     money, payments, bulk batches, cards, debts, conversions, rates and
//     the reconciliation's reports;
//   - package customerstore: the customers and their review.
//
// The simulated providers keep their state apart from ours, as remote
// systems would, in stores of their own beside their code
// (pkg/providers/<kind>/<kind>db); no package of the store imports a
// provider.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DB is the table every store type works on, with the toolkit's reads and
// writes (dynamo.DB).
type DB struct {
	*dynamo.DB
}

// New returns a DB for table through client. A transaction holds at most
// dynamo.MaxTransactItems items, or dynamo.LocalTransactItems when the
// client has an endpoint of its own (NewClient with an endpoint): DynamoDB
// Local 1.11 keeps DynamoDB's former limit.
func New(client *dynamodb.Client, table string) *DB {
	return &DB{DB: dynamo.New(client, table)}
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

// TableDefinition is the one definition of the table
// (schema.TableDefinition), for the callers that create it.
func TableDefinition(name string) *dynamodb.CreateTableInput { return schema.TableDefinition(name) }

// The names of the table's indexes and of its TTL attribute, for the
// callers that read them (schema declares them).
const (
	GSI1          = schema.GSI1
	GSI2          = schema.GSI2
	GSI3          = schema.GSI3
	AttrExpiresAt = schema.AttrExpiresAt
)

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
			AttributeName: aws.String(schema.AttrExpiresAt), Enabled: aws.Bool(true),
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
