package moneystore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/cards"
	"payments/pkg/page"
	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
)

// Card reads a card of the company, strongly consistent.
func (s *Cards) Card(ctx context.Context, companyID, id string) (cards.Card, error) {
	var it cardItem
	if err := s.db.Get(ctx, "card "+id, schema.CompanyPK(companyID), schema.CardSK(id), &it, cards.ErrNotFound); err != nil {
		return cards.Card{}, err
	}
	return it.card()
}

// CardSecrets reads the sealed number and CVV of card id of the company,
// strongly consistent: from the card's secrets item, else (a sandbox card
// issued before the secrets item, not migrated yet) from the card item
// itself. A card with neither is an error.
func (s *Cards) CardSecrets(ctx context.Context, companyID, id string) (cards.Secrets, error) {
	var sec cardSecretsItem
	found, err := s.db.Find(ctx, schema.CompanyPK(companyID), schema.CardSecretsSK(id), &sec)
	switch {
	case err != nil:
		return cards.Secrets{}, fmt.Errorf("store: get the secrets of card %s: %w", id, err)
	case found:
		return cards.Secrets{Number: sec.Number, CVV: sec.CVV}, nil
	}
	var it cardItem
	if err := s.db.Get(ctx, "card "+id, schema.CompanyPK(companyID), schema.CardSK(id), &it, cards.ErrNotFound); err != nil {
		return cards.Secrets{}, err
	}
	if it.Number == nil || it.CVV == nil {
		return cards.Secrets{}, fmt.Errorf("store: card %s has no sealed number and CVV", id)
	}
	return cards.Secrets{Number: *it.Number, CVV: *it.CVV}, nil
}

// Cards reads every card of the company, oldest first, strongly
// consistent.
func (s *Cards) Cards(ctx context.Context, companyID string) ([]cards.Card, error) {
	items, err := s.all(ctx, "", schema.CompanyPK(companyID), schema.CardSKPrefix)
	if err != nil {
		return nil, fmt.Errorf("store: list cards: %w", err)
	}
	return oldestFirst(dynamo.DecodeAll(items, cardItem.card))
}

// CustomerCards reads the company's cards of one customer, oldest first,
// from GSI1 (eventually consistent).
func (s *Cards) CustomerCards(ctx context.Context, companyID, customerID string) ([]cards.Card, error) {
	items, err := s.all(ctx, schema.GSI1, schema.CustomerCardsPK(companyID, customerID), schema.CardSKPrefix)
	if err != nil {
		return nil, fmt.Errorf("store: list customer cards: %w", err)
	}
	return oldestFirst(dynamo.DecodeAll(items, cardItem.card))
}

// oldestFirst sorts cs by creation time, whatever their ids.
func oldestFirst(cs []cards.Card, err error) ([]cards.Card, error) {
	slices.SortStableFunc(cs, func(a, b cards.Card) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return cs, err
}

// Transaction reads a card transaction of the company, strongly
// consistent.
func (s *Cards) Transaction(ctx context.Context, companyID, id string) (cards.Transaction, error) {
	var it cardTxItem
	if err := s.db.Get(ctx, "card transaction "+id, schema.CompanyPK(companyID), schema.CardTxSK(id), &it, cards.ErrTransactionNotFound); err != nil {
		return cards.Transaction{}, err
	}
	return it.transaction()
}

// Transactions reads every card transaction of the company, oldest first
// (their ids are UUID v7), strongly consistent.
func (s *Cards) Transactions(ctx context.Context, companyID string) ([]cards.Transaction, error) {
	items, err := s.all(ctx, "", schema.CompanyPK(companyID), schema.CardTxSKPrefix)
	if err != nil {
		return nil, fmt.Errorf("store: list card transactions: %w", err)
	}
	return dynamo.DecodeAll(items, cardTxItem.transaction)
}

// all reads every item of partition pk whose sort key starts with prefix,
// in key order: of GSI1 when index is set, else of the table, strongly
// consistent.
func (s *Cards) all(ctx context.Context, index, pk, prefix string) ([]map[string]types.AttributeValue, error) {
	in := &dynamodb.QueryInput{
		TableName:                aws.String(s.db.Table),
		KeyConditionExpression:   aws.String("#pk = :pk AND begins_with(#sk, :prefix)"),
		ExpressionAttributeNames: map[string]string{"#pk": schema.AttrPK, "#sk": schema.AttrSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": dynamo.Str(pk), ":prefix": dynamo.Str(prefix),
		},
		ConsistentRead: aws.Bool(true),
	}
	if index != "" {
		in.IndexName, in.ConsistentRead = aws.String(index), nil
		in.ExpressionAttributeNames = map[string]string{"#pk": schema.AttrGSI1PK, "#sk": schema.AttrGSI1SK}
	}
	return s.wallets.query(ctx, in)
}

// OpenTransactions returns up to limit PROCESSING transactions of every
// company created before cutoff, from every shard of the open card
// transaction index, oldest first within a shard (eventually consistent:
// the caller reads each again).
func (s *Cards) OpenTransactions(ctx context.Context, cutoff time.Time, limit int) ([]cards.Transaction, error) {
	// The index was sharded from the start: no item is in the partition
	// named by the prefix alone, which schema.ShardKeys lists last.
	return store.DueItems(ctx, s.db, schema.ShardKeys(schema.OpenCardTxIndex)[:schema.IndexShards], cutoff, limit, cardTxItem.transaction)
}

// HoldsBefore returns up to limit authorizations of every company whose
// hold is open and that were created before cutoff, from every shard of
// the open hold index, oldest first within a shard (eventually
// consistent: the caller reads each again).
func (s *Cards) HoldsBefore(ctx context.Context, cutoff time.Time, limit int) ([]cards.Transaction, error) {
	// The index was sharded from the start, as OpenTransactions'.
	return store.DueItems(ctx, s.db, schema.ShardKeys(schema.OpenHoldIndex)[:schema.IndexShards], cutoff, limit, cardTxItem.transaction)
}

// SlotsUsed reads the company's count of live cards, strongly consistent.
func (s *Cards) SlotsUsed(ctx context.Context, companyID string) (int, error) {
	var it cardSlotsItem
	if _, err := s.db.Find(ctx, schema.CompanyPK(companyID), schema.CardSlotsSK, &it); err != nil {
		return 0, fmt.Errorf("store: get card slots: %w", err)
	}
	return it.Used, nil
}

// PutReveal writes a reveal's audit record as new.
func (s *Cards) PutReveal(ctx context.Context, r cards.Reveal) error {
	item, err := attributevalue.MarshalMap(newRevealItem(r))
	if err != nil {
		return fmt.Errorf("store: marshal reveal: %w", err)
	}
	err = s.db.Put(ctx, "put reveal "+r.ID, &dynamodb.PutItemInput{
		TableName:           aws.String(s.db.Table),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
	if dynamo.ConditionFailed(err) {
		return fmt.Errorf("store: reveal %s exists", r.ID)
	}
	return err
}

// Reveals reads page p of a card's reveal records, newest first, strongly
// consistent (ReadPage; reveal ids are UUID v7).
func (s *Cards) Reveals(ctx context.Context, companyID, cardID string, p page.Request) (page.Result[cards.Reveal], error) {
	prefix := schema.RevealSKPrefix(cardID)
	lo, hi := dynamo.TimeRange(prefix, time.Time{}, time.Time{})
	rows, total, next, err := s.db.ReadPage(ctx, dynamo.Listing{
		PKAttr: schema.AttrPK, SKAttr: schema.AttrSK, PK: schema.CompanyPK(companyID),
		Prefix: prefix, Lo: lo, Hi: hi, Consistent: true,
	}, p)
	if err != nil {
		return page.Result[cards.Reveal]{}, fmt.Errorf("store: list reveals: %w", err)
	}
	return dynamo.PageOf(rows, total, next, revealItem.reveal)
}
