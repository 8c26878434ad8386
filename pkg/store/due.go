package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
)

// duePage is how many items one query of a due index asks for: a sweep
// reads its limit a page at a time, shard after shard.
const duePage = 100

// DueItems returns up to limit items of the sharded GSI2 index named
// prefix whose GSI2SK (a time first) is before cutoff, oldest first within
// a shard, decoded by convert; eventually consistent: the caller reads each
// again. shards are the partitions read: schema.ShardKeys(prefix), with the
// unsharded one last, or only its IndexShards shards for an index sharded
// from the start. It pages through each shard (a page ends at duePage
// items or DynamoDB's 1 MB) until limit items are read or the shards are
// exhausted: what is past limit waits for the next sweep.
func DueItems[I, T any](ctx context.Context, db *DB, shards []string, cutoff time.Time, limit int, convert func(I) (T, error)) ([]T, error) {
	var out []T
	for _, shard := range shards {
		var start map[string]types.AttributeValue
		for len(out) < limit {
			page, err := db.Client.Query(ctx, &dynamodb.QueryInput{
				TableName:              aws.String(db.Table),
				IndexName:              aws.String(schema.GSI2),
				KeyConditionExpression: aws.String("GSI2PK = :pk AND GSI2SK < :cut"),
				ExpressionAttributeValues: map[string]types.AttributeValue{
					":pk": &types.AttributeValueMemberS{Value: shard}, ":cut": &types.AttributeValueMemberS{Value: timestamp.Format(cutoff)},
				},
				Limit:             aws.Int32(int32(min(duePage, limit-len(out)))),
				ExclusiveStartKey: start,
			})
			if err != nil {
				return nil, fmt.Errorf("store: query %s: %w", shard, err)
			}
			items, err := dynamo.DecodeAll(page.Items, convert)
			if err != nil {
				return nil, err
			}
			out = append(out, items...)
			if start = page.LastEvaluatedKey; start == nil {
				break
			}
		}
		if len(out) >= limit {
			break
		}
	}
	return out, nil
}
