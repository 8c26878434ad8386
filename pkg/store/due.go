package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/store/dynamo"
	"payments/pkg/timestamp"
)

// dueItems returns up to limit items of the sharded GSI2 index named
// prefix whose GSI2SK (a time first) is before cutoff, oldest first within
// a shard, decoded by convert; eventually consistent: the caller reads each
// again. shards are the partitions read: shardKeys(prefix), with the
// unsharded one last, or only its IndexShards shards for an index sharded
// from the start.
func dueItems[I, T any](ctx context.Context, db *DB, shards []string, cutoff time.Time, limit int, convert func(I) (T, error)) ([]T, error) {
	var out []T
	for _, shard := range shards {
		if len(out) >= limit {
			break
		}
		page, err := db.Client.Query(ctx, &dynamodb.QueryInput{
			TableName:              aws.String(db.Table),
			IndexName:              aws.String(GSI2),
			KeyConditionExpression: aws.String("GSI2PK = :pk AND GSI2SK < :cut"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":pk": &types.AttributeValueMemberS{Value: shard}, ":cut": &types.AttributeValueMemberS{Value: timestamp.Format(cutoff)},
			},
			Limit: aws.Int32(int32(limit - len(out))),
		})
		if err != nil {
			return nil, fmt.Errorf("store: query %s: %w", shard, err)
		}
		items, err := dynamo.DecodeAll(page.Items, convert)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}
