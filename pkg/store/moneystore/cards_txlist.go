package moneystore

import (
	"context"
	"fmt"

	"payments/pkg/cards"
	"payments/pkg/page"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
)

// The card transaction lists. Every card transaction item (CTX#<uuid v7>
// in the company partition) is also on:
//
//   - GSI1, its card's partition: GSI1PK COMPANY#<id>#CARD#<card id>,
//     GSI1SK CTX#<uuid v7>;
//   - GSI3, its customer's partition across their cards: GSI3PK
//     COMPANY#<id>#CUSTOMER#<customer id>#CTX, GSI3SK CTX#<uuid v7>.
//
// A list reads one of those partitions with ReadPage, newest first,
// eventually consistent: the dates narrow the sort-key range (ids are UUID
// v7 of created_at), type and status are a FilterExpression.

// CardTransactions reads page p of a card's transactions that f selects,
// newest first, from GSI1 (ReadPage).
func (s *Cards) CardTransactions(ctx context.Context, companyID, cardID string, f cards.TxFilter, p page.Request) (page.Result[cards.Transaction], error) {
	l := cardTxListing(companyID, f)
	l.Index, l.PKAttr, l.SKAttr, l.PK = schema.GSI1, schema.AttrGSI1PK, schema.AttrGSI1SK, schema.CardTxsPK(companyID, cardID)
	return s.txPage(ctx, l, p)
}

// CustomerTransactions reads page p of the transactions that f selects of
// every card of a customer, newest first, from GSI3 (ReadPage).
func (s *Cards) CustomerTransactions(ctx context.Context, companyID, customerID string, f cards.TxFilter, p page.Request) (page.Result[cards.Transaction], error) {
	l := cardTxListing(companyID, f)
	l.Index, l.PKAttr, l.SKAttr, l.PK = schema.GSI3, schema.AttrGSI3PK, schema.AttrGSI3SK, schema.CustomerTxsPK(companyID, customerID)
	return s.txPage(ctx, l, p)
}

// cardTxListing is the list of the company's card transactions that f
// selects, on an index whose partition the caller sets.
func cardTxListing(companyID string, f cards.TxFilter) dynamo.Listing {
	lo, hi := dynamo.TimeRange(schema.CardTxSKPrefix, f.From, f.To)
	l := dynamo.Listing{
		Prefix: schema.CardTxSKPrefix, Lo: lo, Hi: hi,
		TableKey: func(id string) (string, string) { return schema.CompanyPK(companyID), schema.CardTxSK(id) },
	}
	if f.Type != "" {
		l.Filter.Equal("tx_type", string(f.Type))
	}
	if f.Status != "" {
		l.Filter.Equal("status", string(f.Status))
	}
	return l
}

// txPage reads page p of l.
func (s *Cards) txPage(ctx context.Context, l dynamo.Listing, p page.Request) (page.Result[cards.Transaction], error) {
	rows, total, next, err := s.db.ReadPage(ctx, l, p)
	if err != nil {
		return page.Result[cards.Transaction]{}, fmt.Errorf("store: list card transactions: %w", err)
	}
	return dynamo.PageOf(rows, total, next, cardTxItem.transaction)
}
