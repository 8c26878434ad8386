package wallets

import (
	"context"
	"errors"
	"time"

	"payments/pkg/page"
)

// Balances reads a company's wallets: all the payments function serves of
// them (GET /payment/balance) and all the cards service asks (its USD
// wallet), and the ledger the company dashboard's Home shows. It moves no
// money, so it needs only the wallets' store.
type Balances struct{ svc *Service }

// NewBalances returns the Balances over store, or an error when store is
// nil.
func NewBalances(store Store) (*Balances, error) {
	if store == nil {
		return nil, errors.New("wallets: no Store to build the balances")
	}
	return &Balances{newService(store, nil)}, nil
}

// List is Service.List.
func (b *Balances) List(ctx context.Context, companyID string) ([]Wallet, error) {
	return b.svc.List(ctx, companyID)
}

// Transactions is Service.Transactions: the company's ledger entries, a
// page at a time, newest first (the dashboard's Home reads the last ones).
func (b *Balances) Transactions(ctx context.Context, companyID string, q TransactionQuery, p page.Request) (page.Result[Transaction], error) {
	return b.svc.Transactions(ctx, companyID, q, p)
}

// USDWallet is Service.USDWallet.
func (b *Balances) USDWallet(ctx context.Context, companyID string) (Wallet, error) {
	return b.svc.USDWallet(ctx, companyID)
}

// Time is Service.Time.
func (b *Balances) Time() time.Time { return b.svc.Time() }

// Transaction is Service.Transaction: one ledger entry of the company.
func (b *Balances) Transaction(ctx context.Context, companyID, id string) (Transaction, error) {
	return b.svc.Transaction(ctx, companyID, id)
}
