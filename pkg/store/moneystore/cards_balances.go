package moneystore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
)

// CardBalances returns the sum of the balances of every company's cards,
// from every shard of the card index (eventually consistent): what the
// card issuer must hold for them (the reconciliation).
func (s *Cards) CardBalances(ctx context.Context) (int64, error) {
	var sum int64
	for _, shard := range schema.ShardKeys(schema.CardIndex)[:schema.IndexShards] {
		p := dynamodb.NewQueryPaginator(s.db.Client, &dynamodb.QueryInput{
			TableName:                 aws.String(s.db.Table),
			IndexName:                 aws.String(schema.GSI3),
			KeyConditionExpression:    aws.String("#pk = :pk"),
			ProjectionExpression:      aws.String("#balance"),
			ExpressionAttributeNames:  map[string]string{"#pk": schema.AttrGSI3PK, "#balance": "balance"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": dynamo.Str(shard)},
		})
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			if err != nil {
				return 0, fmt.Errorf("store: sum the cards' balances: %w", err)
			}
			for _, item := range out.Items {
				var it struct {
					Balance int64 `dynamodbav:"balance"`
				}
				if err := attributevalue.UnmarshalMap(item, &it); err != nil {
					return 0, fmt.Errorf("store: unmarshal a card's balance: %w", err)
				}
				sum += it.Balance
			}
		}
	}
	return sum, nil
}
