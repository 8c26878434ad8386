package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Batch limits of DynamoDB.
const (
	// MaxBatchWrite is the most items one BatchWriteItem puts.
	MaxBatchWrite = 25
	// MaxBatchGet is the most keys one BatchGetItem reads.
	MaxBatchGet = 100
	// batchTries bounds the calls for the items DynamoDB leaves
	// unprocessed (throttled), spaced by the store's policy.
	batchTries = 8
)

// PutAll writes items, new or replacing, with BatchWriteItem calls of
// MaxBatchWrite items, in order: a call's items are all written (those
// DynamoDB leaves unprocessed tried again) before the next call's. Unlike
// a transaction it is not atomic: a failure may leave some written.
func (db *DB) PutAll(ctx context.Context, what string, items []map[string]types.AttributeValue) error {
	policy := db.Retry
	policy.Attempts = batchTries
	for start := 0; start < len(items); start += MaxBatchWrite {
		var reqs []types.WriteRequest
		for _, it := range items[start:min(start+MaxBatchWrite, len(items))] {
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		}
		pending := map[string][]types.WriteRequest{db.Table: reqs}
		_, err := policy.Do(ctx, func(ctx context.Context) (bool, error) {
			out, err := db.Client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
			if err != nil {
				return false, err
			}
			pending = out.UnprocessedItems
			return len(pending[db.Table]) > 0, nil
		})
		switch {
		case err != nil:
			return fmt.Errorf("store: %s: %w", what, err)
		case len(pending[db.Table]) > 0:
			return fmt.Errorf("store: %s: %d items left unprocessed", what, len(pending[db.Table]))
		}
	}
	return nil
}

// GetAll reads the items of keys that exist, strongly consistent, with
// BatchGetItem calls of MaxBatchGet keys.
func (db *DB) GetAll(ctx context.Context, what string, keys []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error) {
	policy := db.Retry
	policy.Attempts = batchTries
	var found []map[string]types.AttributeValue
	for start := 0; start < len(keys); start += MaxBatchGet {
		pending := map[string]types.KeysAndAttributes{db.Table: {
			Keys: keys[start:min(start+MaxBatchGet, len(keys))], ConsistentRead: aws.Bool(true),
		}}
		_, err := policy.Do(ctx, func(ctx context.Context) (bool, error) {
			out, err := db.Client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: pending})
			if err != nil {
				return false, err
			}
			found = append(found, out.Responses[db.Table]...)
			pending = out.UnprocessedKeys
			return len(pending[db.Table].Keys) > 0, nil
		})
		switch {
		case err != nil:
			return nil, fmt.Errorf("store: %s: %w", what, err)
		case len(pending[db.Table].Keys) > 0:
			return nil, fmt.Errorf("store: %s: %d keys left unprocessed", what, len(pending[db.Table].Keys))
		}
	}
	return found, nil
}
