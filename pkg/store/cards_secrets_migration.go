package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// SecretsMigrationPage is how many items one Scan page of
// RemoveCardSecrets reads at most (DynamoDB also ends a page at 1 MB).
const SecretsMigrationPage = 500

// SecretsRemoval is what RemoveCardSecrets did.
type SecretsRemoval struct {
	// Scanned is how many items the scan read; Found the card items that
	// held a sealed number or CVV; Removed those it removed them from
	// (Found on a dry run's none).
	Scanned, Found, Removed int
	// Pages is how many Scan pages were read.
	Pages int
}

// RemoveCardSecrets is the one-off migration of production mode's card
// items: it deletes the sealed number and CVV (the attributes number and
// cvv) of every card item of the table, reading the table a Scan page of
// at most pageSize items at a time (0: SecretsMigrationPage) and updating
// each card found with REMOVE, conditioned on its still being a card. It
// is idempotent: a card without them is not found again, and a second run
// removes nothing. dryRun counts the cards without changing them. Only
// card items are touched: the simulated issuer's own cards (sandbox mode)
// are of another type.
func (c *Cards) RemoveCardSecrets(ctx context.Context, pageSize int32, dryRun bool) (SecretsRemoval, error) {
	if pageSize <= 0 {
		pageSize = SecretsMigrationPage
	}
	var out SecretsRemoval
	in := &dynamodb.ScanInput{
		TableName:                aws.String(c.db.Table),
		Limit:                    aws.Int32(pageSize),
		ConsistentRead:           aws.Bool(true),
		FilterExpression:         aws.String("#type = :card AND (attribute_exists(#number) OR attribute_exists(#cvv))"),
		ProjectionExpression:     aws.String("#pk, #sk"),
		ExpressionAttributeNames: map[string]string{"#type": attrType, "#number": "number", "#cvv": "cvv", "#pk": attrPK, "#sk": attrSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":card": &types.AttributeValueMemberS{Value: kindCard},
		},
	}
	p := dynamodb.NewScanPaginator(c.db.Client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return out, fmt.Errorf("store: scan for card secrets: %w", err)
		}
		out.Pages++
		out.Scanned += int(page.ScannedCount)
		out.Found += len(page.Items)
		if dryRun {
			continue
		}
		for _, key := range page.Items {
			_, err := c.db.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName:                 aws.String(c.db.Table),
				Key:                       map[string]types.AttributeValue{attrPK: key[attrPK], attrSK: key[attrSK]},
				UpdateExpression:          aws.String("REMOVE #number, #cvv"),
				ConditionExpression:       aws.String("#type = :card"),
				ExpressionAttributeNames:  map[string]string{"#type": attrType, "#number": "number", "#cvv": "cvv"},
				ExpressionAttributeValues: map[string]types.AttributeValue{":card": &types.AttributeValueMemberS{Value: kindCard}},
			})
			var gone *types.ConditionalCheckFailedException
			switch {
			case errors.As(err, &gone): // deleted since the scan read it
			case err != nil:
				return out, fmt.Errorf("store: remove the secrets of %v: %w", key[attrSK], err)
			default:
				out.Removed++
			}
		}
	}
	return out, nil
}
