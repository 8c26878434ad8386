package cards

import (
	"context"
	"errors"
	"fmt"
	"time"

	"payments/pkg/customers"
	"payments/pkg/page"
)

// Default page sizes of the transaction lists.
const (
	// TransactionsPageSize is the default limit of GET
	// /cards/{id}/transactions (spec §4.19).
	TransactionsPageSize = 50
	// CustomerTransactionsPageSize is the default limit of GET
	// /customers/{id}/transactions.
	CustomerTransactionsPageSize = 20
)

// TxLists reads pages of card transactions, newest first. A page past the
// end is empty.
type TxLists interface {
	// CardTransactions reads page p of a card's transactions that f
	// selects.
	CardTransactions(ctx context.Context, companyID, cardID string, f TxFilter, p page.Request) (page.Result[Transaction], error)
	// CustomerTransactions reads page p of the transactions that f
	// selects, of every card of a customer.
	CustomerTransactions(ctx context.Context, companyID, customerID string, f TxFilter, p page.Request) (page.Result[Transaction], error)
}

// TxFilter selects card transactions: each field set must match.
type TxFilter struct {
	Type   TxType
	Status TxStatus
	// From (inclusive) and To (exclusive) bound the creation time; zero
	// is unbounded.
	From, To time.Time
}

// TxQuery is the query of a transaction list: its filter, its page and
// its flags.
type TxQuery struct {
	TxFilter
	Page page.Request
	// IncludeRaw adds to each transaction what the card network told us.
	IncludeRaw bool
	// Sync is accepted and changes nothing: the issuer pushes every
	// transaction to us, so there is nothing to pull (docs/cards.md).
	Sync bool
}

// ListTransactions returns page q.Page of card id's transactions that q
// selects, newest first, each with its card and customer; ErrNotFound
// when the card is not the company's.
func (s *Service) ListTransactions(ctx context.Context, companyID, id string, q TxQuery) (page.Result[TxView], error) {
	card, err := s.card(ctx, companyID, id)
	if err != nil {
		return page.Result[TxView]{}, err
	}
	txs, err := s.Store.CardTransactions(ctx, companyID, card.ID, q.TxFilter, q.Page)
	if err != nil {
		return page.Result[TxView]{}, fmt.Errorf("cards: list the card's transactions: %w", err)
	}
	v := s.txViewer(companyID)
	v.cards[card.ID] = card
	return v.page(ctx, txs)
}

// CustomerTransactions returns page q.Page of the transactions that q
// selects of every card of customer id, newest first, each with its card
// and customer; ErrCustomerNotFound when the customer is not the company's. A
// customer without cards has none.
func (s *Service) CustomerTransactions(ctx context.Context, companyID, id string, q TxQuery) (page.Result[TxView], error) {
	if !validID(id) {
		return page.Result[TxView]{}, ErrCustomerNotFound
	}
	c, err := s.Customers.Get(ctx, companyID, id)
	switch {
	case errors.Is(err, customers.ErrNotFound):
		return page.Result[TxView]{}, ErrCustomerNotFound
	case err != nil:
		return page.Result[TxView]{}, fmt.Errorf("cards: read customer: %w", err)
	}
	txs, err := s.Store.CustomerTransactions(ctx, companyID, c.ID, q.TxFilter, q.Page)
	if err != nil {
		return page.Result[TxView]{}, fmt.Errorf("cards: list the customer's transactions: %w", err)
	}
	v := s.txViewer(companyID)
	v.customers[c.ID] = c
	return v.page(ctx, txs)
}

// GetTransaction returns transaction txID of card id with its card and
// customer: ErrNotFound when the card is not the company's,
// ErrTransactionNotFound when the transaction is not the card's.
func (s *Service) GetTransaction(ctx context.Context, companyID, id, txID string) (TxView, error) {
	card, err := s.card(ctx, companyID, id)
	if err != nil {
		return TxView{}, err
	}
	if !validID(txID) {
		return TxView{}, ErrTransactionNotFound
	}
	tx, err := s.Store.Transaction(ctx, companyID, txID)
	if err != nil {
		return TxView{}, err
	}
	if tx.CardID != card.ID {
		return TxView{}, ErrTransactionNotFound
	}
	v := s.txViewer(companyID)
	v.cards[card.ID] = card
	return v.view(ctx, tx)
}

// TransactionView returns tx, a transaction of the company, with its card
// and its customer, which it reads.
func (s *Service) TransactionView(ctx context.Context, companyID string, tx Transaction) (TxView, error) {
	return s.txViewer(companyID).view(ctx, tx)
}

// TxView is a card transaction with its card and its customer: what the
// routes show of it.
type TxView struct {
	Tx     Transaction
	Card   Card
	Holder customers.Customer
}

// txViewer builds the views of a company's transactions, reading each
// distinct card and customer once.
type txViewer struct {
	s         *Service
	companyID string
	cards     map[string]Card
	customers map[string]customers.Customer
}

func (s *Service) txViewer(companyID string) *txViewer {
	return &txViewer{s: s, companyID: companyID, cards: map[string]Card{}, customers: map[string]customers.Customer{}}
}

// page returns the views of the items of p, with its total and next
// position.
func (v *txViewer) page(ctx context.Context, p page.Result[Transaction]) (page.Result[TxView], error) {
	out := page.Result[TxView]{Items: make([]TxView, len(p.Items)), Total: p.Total, Next: p.Next}
	for i, tx := range p.Items {
		r, err := v.view(ctx, tx)
		if err != nil {
			return page.Result[TxView]{}, err
		}
		out.Items[i] = r
	}
	return out, nil
}

// view returns tx with its card and its customer.
func (v *txViewer) view(ctx context.Context, tx Transaction) (TxView, error) {
	card, ok := v.cards[tx.CardID]
	if !ok {
		c, err := v.s.Store.Card(ctx, v.companyID, tx.CardID)
		if err != nil {
			return TxView{}, fmt.Errorf("cards: transaction %s: read its card: %w", tx.ID, err)
		}
		card, v.cards[tx.CardID] = c, c
	}
	holder, ok := v.customers[tx.CustomerID]
	if !ok {
		c, err := v.s.Customers.Get(ctx, v.companyID, tx.CustomerID)
		if err != nil {
			return TxView{}, fmt.Errorf("cards: transaction %s: read its customer: %w", tx.ID, err)
		}
		holder, v.customers[tx.CustomerID] = c, c
	}
	return TxView{Tx: tx, Card: card, Holder: holder}, nil
}
