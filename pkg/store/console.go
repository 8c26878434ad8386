package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
)

// The operator console's queues (the payments to reconcile, the customers
// to review) are GSI1 partitions of every company's items, each keyed by
// its record's id, a UUID v7: read oldest first, page by page by the last
// id read.

// ConsolePage returns a page of up to limit items of the GSI1 partition pk
// after the id after (eventually consistent: a write conditions on the
// stored record), decoded by convert, and the id of its last item when
// another page follows ("" otherwise): one item more than the page is
// read to tell. what names the queue in errors.
func ConsolePage[I, T any](ctx context.Context, db *DB, what, pk, after string, limit int, convert func(I) (T, error), id func(T) string) ([]T, string, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(db.Table),
		IndexName:                 aws.String(schema.GSI1),
		KeyConditionExpression:    aws.String("GSI1PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": dynamo.Str(pk)},
		Limit:                     aws.Int32(int32(limit + 1)),
	}
	if after != "" {
		in.KeyConditionExpression = aws.String("GSI1PK = :pk AND GSI1SK > :after")
		in.ExpressionAttributeValues[":after"] = dynamo.Str(after)
	}
	out, err := db.Client.Query(ctx, in)
	if err != nil {
		return nil, "", fmt.Errorf("store: query %s: %w", what, err)
	}
	items, err := dynamo.DecodeAll(out.Items, convert)
	if err != nil {
		return nil, "", err
	}
	if len(items) <= limit {
		return items, "", nil
	}
	items = items[:limit]
	return items, id(items[limit-1]), nil
}

// ConsoleCount returns how many items the GSI1 partition pk holds: a Select
// COUNT, summed over its pages (eventually consistent).
func ConsoleCount(ctx context.Context, db *DB, what, pk string) (int, error) {
	n, err := db.CountQuery(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(db.Table),
		IndexName:                 aws.String(schema.GSI1),
		KeyConditionExpression:    aws.String("GSI1PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": dynamo.Str(pk)},
		Select:                    types.SelectCount,
	})
	if err != nil {
		return 0, fmt.Errorf("store: count %s: %w", what, err)
	}
	return n, nil
}
