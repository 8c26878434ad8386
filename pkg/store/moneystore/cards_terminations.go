package moneystore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/cards"
	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
)

// A termination is one transaction (Terminate) that leaves on the card
// what its open holds keep, and the card in the open termination index;
// the sweeper then releases the holds a page at a time (HoldsAfter, and
// Record for each), and takes the card out of the index once it keeps
// nothing (TerminationDone).

// Terminating returns up to limit terminated cards, of every company,
// that still keep money for open holds and were terminated before cutoff,
// from every shard of the open termination index, oldest first within a
// shard (eventually consistent: the caller reads each again).
func (s *Cards) Terminating(ctx context.Context, cutoff time.Time, limit int) ([]cards.Card, error) {
	// The index was sharded from the start, as OpenTransactions'.
	return store.DueItems(ctx, s.db, schema.ShardKeys(schema.OpenTerminationIndex)[:schema.IndexShards], cutoff, limit, cardItem.card)
}

// TerminationDone takes terminated card id out of the open termination
// index, on the condition that it keeps nothing (its balance and holds
// 0): cards.ErrChanged when it still does, cards.ErrNotFound when there is
// no such card.
func (s *Cards) TerminationDone(ctx context.Context, companyID, id string) error {
	_, err := s.db.Update(ctx, "take card "+id+" out of the open termination index", &dynamodb.UpdateItemInput{
		TableName:           aws.String(s.db.Table),
		Key:                 dynamo.Key(schema.CompanyPK(companyID), schema.CardSK(id)),
		UpdateExpression:    aws.String("REMOVE #gpk, #gsk"),
		ConditionExpression: aws.String("#cst = :terminated AND #cbal = :zero AND #cheld = :zero"),
		ExpressionAttributeNames: map[string]string{
			"#gpk": schema.AttrGSI2PK, "#gsk": schema.AttrGSI2SK, "#cst": "status", "#cbal": "balance", "#cheld": "held",
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":terminated": dynamo.Str(string(cards.Terminated)), ":zero": dynamo.Num(0),
		},
	})
	if dynamo.ConditionFailed(err) {
		return s.whyCardRefused(ctx, companyID, id, func(cards.Card) error { return cards.ErrChanged })
	}
	return err
}

// HoldsAfter reads one page of the card's transactions, oldest first,
// after transaction after ("" from the first): at most limit of them, of
// which it returns the authorizations whose hold is open, and the id to
// read the next page after ("" once the page is the last). It reads GSI1,
// eventually consistent: a write on one of them is conditioned on its hold
// as read, and the card leaves the open termination index only once its
// own record keeps nothing.
func (s *Cards) HoldsAfter(ctx context.Context, companyID, cardID, after string, limit int) ([]cards.Transaction, string, error) {
	pk := schema.CardTxsPK(companyID, cardID)
	in := &dynamodb.QueryInput{
		TableName:                aws.String(s.db.Table),
		IndexName:                aws.String(schema.GSI1),
		KeyConditionExpression:   aws.String("#pk = :pk AND begins_with(#sk, :prefix)"),
		FilterExpression:         aws.String("#hold > :zero"),
		ExpressionAttributeNames: map[string]string{"#pk": schema.AttrGSI1PK, "#sk": schema.AttrGSI1SK, "#hold": "hold"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": dynamo.Str(pk), ":prefix": dynamo.Str(schema.CardTxSKPrefix), ":zero": dynamo.Num(0),
		},
		Limit: aws.Int32(int32(limit)),
	}
	if after != "" {
		in.ExclusiveStartKey = map[string]types.AttributeValue{
			schema.AttrPK: dynamo.Str(schema.CompanyPK(companyID)), schema.AttrSK: dynamo.Str(schema.CardTxSK(after)),
			schema.AttrGSI1PK: dynamo.Str(pk), schema.AttrGSI1SK: dynamo.Str(schema.CardTxSK(after)),
		}
	}
	out, err := s.db.Client.Query(ctx, in)
	if err != nil {
		return nil, "", fmt.Errorf("store: query the open holds of card %s: %w", cardID, err)
	}
	holds, err := dynamo.DecodeAll(out.Items, cardTxItem.transaction)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if last, ok := out.LastEvaluatedKey[schema.AttrGSI1SK].(*types.AttributeValueMemberS); ok {
		next = strings.TrimPrefix(last.Value, schema.CardTxSKPrefix)
	}
	return holds, next, nil
}
