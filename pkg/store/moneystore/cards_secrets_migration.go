package moneystore

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/cards"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
)

// SecretsMigrationPage is how many items one Scan page of
// RemoveCardSecrets and MoveCardSecrets reads at most (DynamoDB also ends
// a page at 1 MB).
const SecretsMigrationPage = 500

// SecretsRemoval is what RemoveCardSecrets or MoveCardSecrets did.
type SecretsRemoval struct {
	// Scanned is how many items the scan read; Found the card items that
	// held a sealed number or CVV; Removed those it removed (or moved)
	// them from (Found on a dry run's none).
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
	return c.inlineSecrets(ctx, pageSize, dryRun, "#pk, #sk", func(item map[string]types.AttributeValue) error {
		_, err := c.db.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(c.db.Table),
			Key:                       map[string]types.AttributeValue{schema.AttrPK: item[schema.AttrPK], schema.AttrSK: item[schema.AttrSK]},
			UpdateExpression:          aws.String("REMOVE #number, #cvv"),
			ConditionExpression:       aws.String("#type = :card"),
			ExpressionAttributeNames:  map[string]string{"#type": schema.AttrType, "#number": "number", "#cvv": "cvv"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":card": &types.AttributeValueMemberS{Value: schema.KindCard}},
		})
		return err
	})
}

// MoveCardSecrets is the one-off migration of sandbox mode's card items:
// it moves the sealed number and CVV that a card item still holds inline
// (issued before they had an item of their own) into the card's secrets
// item, which no index sees, leaving their refs (master key id and
// tokens) on the card. Each card is one transaction: the secrets item put
// and the attributes removed, conditioned on the card still holding the
// values read. It scans as RemoveCardSecrets does, is idempotent, and
// dryRun counts the cards without changing them.
func (c *Cards) MoveCardSecrets(ctx context.Context, pageSize int32, dryRun bool) (SecretsRemoval, error) {
	return c.inlineSecrets(ctx, pageSize, dryRun, "#pk, #sk, #number, #cvv", func(item map[string]types.AttributeValue) error {
		var it cardItem
		if err := attributevalue.UnmarshalMap(item, &it); err != nil {
			return fmt.Errorf("store: decode card %v: %w", item[schema.AttrSK], err)
		}
		if it.Number == nil || it.CVV == nil {
			return fmt.Errorf("store: card %v holds a sealed number or CVV alone", item[schema.AttrSK])
		}
		pk, sk := item[schema.AttrPK].(*types.AttributeValueMemberS), item[schema.AttrSK].(*types.AttributeValueMemberS)
		companyID, cardID := pk.Value[len(schema.CompanyPK("")):], sk.Value[len(schema.CardSKPrefix):]
		if schema.CompanyPK(companyID) != pk.Value || schema.CardSK(cardID) != sk.Value {
			return fmt.Errorf("store: card key %s %s is not a card's", pk.Value, sk.Value)
		}
		secrets, err := attributevalue.MarshalMap(newCardSecretsItem(companyID, cardID, cards.Secrets{Number: *it.Number, CVV: *it.CVV}))
		if err != nil {
			return fmt.Errorf("store: marshal card secrets: %w", err)
		}
		refs := cards.RefsOf(*it.Number, *it.CVV)
		_, err = c.db.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: aws.String(c.db.Table), Item: secrets}},
			{Update: &types.Update{
				TableName:           aws.String(c.db.Table),
				Key:                 map[string]types.AttributeValue{schema.AttrPK: item[schema.AttrPK], schema.AttrSK: item[schema.AttrSK]},
				UpdateExpression:    aws.String("SET #kid = :kid, #ntok = :ntok, #ctok = :ctok REMOVE #number, #cvv"),
				ConditionExpression: aws.String("#type = :card AND #number = :number AND #cvv = :cvv"),
				ExpressionAttributeNames: map[string]string{"#type": schema.AttrType, "#number": "number", "#cvv": "cvv",
					"#kid": "sealed_key_id", "#ntok": "number_token", "#ctok": "cvv_token"},
				ExpressionAttributeValues: map[string]types.AttributeValue{
					":card": dynamo.Str(schema.KindCard), ":number": item["number"], ":cvv": item["cvv"],
					":kid": dynamo.Str(refs.KeyID), ":ntok": dynamo.Str(refs.NumberToken), ":ctok": dynamo.Str(refs.CVVToken),
				},
			}},
		}})
		var canceled *types.TransactionCanceledException
		if errors.As(err, &canceled) {
			for _, r := range canceled.CancellationReasons {
				if aws.ToString(r.Code) == "ConditionalCheckFailed" {
					return &types.ConditionalCheckFailedException{Message: aws.String("the card changed since the scan")}
				}
			}
		}
		return err
	})
}

// inlineSecrets scans the table for the card items holding a sealed
// number or CVV, a page of at most pageSize items at a time (0:
// SecretsMigrationPage), each item read with projection (of the
// placeholders #pk, #sk, #number and #cvv), and applies migrate to each
// unless dryRun. A card whose condition failed (deleted or changed since
// the scan read it) is skipped.
func (c *Cards) inlineSecrets(ctx context.Context, pageSize int32, dryRun bool, projection string, migrate func(map[string]types.AttributeValue) error) (SecretsRemoval, error) {
	if pageSize <= 0 {
		pageSize = SecretsMigrationPage
	}
	var out SecretsRemoval
	in := &dynamodb.ScanInput{
		TableName:                aws.String(c.db.Table),
		Limit:                    aws.Int32(pageSize),
		ConsistentRead:           aws.Bool(true),
		FilterExpression:         aws.String("#type = :card AND (attribute_exists(#number) OR attribute_exists(#cvv))"),
		ProjectionExpression:     aws.String(projection),
		ExpressionAttributeNames: map[string]string{"#type": schema.AttrType, "#number": "number", "#cvv": "cvv", "#pk": schema.AttrPK, "#sk": schema.AttrSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":card": &types.AttributeValueMemberS{Value: schema.KindCard},
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
		for _, item := range page.Items {
			err := migrate(item)
			switch {
			case dynamo.ConditionFailed(err): // deleted or changed since the scan read it
			case err != nil:
				return out, fmt.Errorf("store: migrate the secrets of %v: %w", item[schema.AttrSK], err)
			default:
				out.Removed++
			}
		}
	}
	return out, nil
}
