package store

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// TransactFunc is a stand-in for DynamoDB's TransactWriteItems.
type TransactFunc func(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)

// TransactWriteItems calls f.
func (f TransactFunc) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return f(ctx, in, optFns...)
}

// InjectTransactFaultsForTest puts wrap in front of p's TransactWriteItems:
// wrap receives the real call and decides what to answer. The conflict
// back-off becomes instant.
func InjectTransactFaultsForTest(p *Payments, wrap func(real TransactFunc) TransactFunc) {
	p.tx = wrap(p.db.Client.TransactWriteItems)
	p.backoff = func(int) time.Duration { return 0 }
}
