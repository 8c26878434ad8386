package store

import (
	"context"
	"fmt"

	"payments/pkg/fx"
	"payments/pkg/store/dynamo"
	"payments/pkg/wallets"
)

var _ fx.Mover = (*Conversions)(nil)

// Conversions writes the movements of money between two wallets of a
// company at a quoted rate (package fx): conversions and deposits. A
// movement is one TransactWriteItems of six items, named for their
// cancellation reasons: source and destination (walletAdjustment, both
// activeOnly), source_entry and destination_entry (ledgerPut), rate (the
// rate's ConditionCheck, rateCheck) and event (eventPut). A credit to the
// payout balance of a USD wallet first pays the company's pending debts
// (payDebts), four more items a debt: DynamoDB Local's ten leave room for
// one.
type Conversions struct {
	db      *DB
	wallets *Wallets
	rates   *Rates
}

// NewConversions returns the movements store on db.
func NewConversions(db *DB) *Conversions {
	return &Conversions{db: db, wallets: NewWallets(db), rates: NewRates(db)}
}

// movementItems is the number of items of a movement besides its debt
// payments.
const movementItems = 6

// Move writes m in one transaction: the source's payin balance debited by
// -m.Source.Delta on the condition that it covers it and that the wallet is
// active, the destination's payout balance credited by m.Destination.Delta
// (less the debts it pays, when it is a USD wallet) on the condition that
// it is active, both entries with the balances before and after them (see
// balancesOf), the check that m.Rate.ID is still the pair's version, and
// the event. It returns both wallets after it. A changed rate is
// fx.ErrRateChanged; a short source, fx.ErrInsufficientBalance; an
// inactive wallet, wallets.ErrInactive. A debt another write paid first is
// a race lost: the transaction is built again from fresh reads.
func (s *Conversions) Move(ctx context.Context, m fx.Movement) (source, destination wallets.Wallet, err error) {
	src, dst := m.Source, m.Destination
	switch {
	case src.Balance != wallets.Payin || src.Delta >= 0 || dst.Balance != wallets.Payout || dst.Delta <= 0:
		return source, destination, fmt.Errorf("store: movement %s does not move payin to payout", m.ID)
	case src.WalletID == dst.WalletID || src.CompanyID != m.CompanyID || dst.CompanyID != m.CompanyID:
		return source, destination, fmt.Errorf("store: movement %s is not between two wallets of its company", m.ID)
	}
	debit, credit := wallets.Adjustment{Payin: src.Delta}, wallets.Adjustment{Payout: dst.Delta}
	err = s.db.write(ctx, "move "+m.ID, func(ctx context.Context) (*txn, error) {
		sw, err := s.wallets.GetWallet(ctx, m.CompanyID, src.WalletID)
		if err != nil {
			return nil, err
		}
		dw, err := s.wallets.GetWallet(ctx, m.CompanyID, dst.WalletID)
		if err != nil {
			return nil, err
		}
		t := &txn{}
		s.db.recordEffect(ctx, t, m.ID, nil)
		adj, err := s.wallets.payDebts(ctx, t, dw, credit, movementItems, m.Now)
		if err != nil {
			return nil, err
		}
		se, de := src, dst
		se.BalanceBefore, se.BalanceAfter = balancesOf(sw, wallets.Payin, debit)
		de.BalanceBefore, de.BalanceAfter = balancesOf(dw, wallets.Payout, credit)
		t.Add("source", activeOnly(s.wallets.walletAdjustment(m.CompanyID, sw.ID, debit, m.Now)))
		t.Add("destination", activeOnly(s.wallets.walletAdjustment(m.CompanyID, dw.ID, adj, m.Now)))
		for _, e := range []struct {
			name  string
			entry wallets.Transaction
		}{{"source_entry", se}, {"destination_entry", de}} {
			put, err := s.wallets.ledgerPut(e.entry)
			if err != nil {
				return nil, err
			}
			t.Add(e.name, put)
		}
		t.Add("rate", s.rates.rateCheck(m.CompanyID, m.Rate.From, m.Rate.To, m.Rate.ID))
		ev, err := eventPut(s.db.Table, m.Event)
		if err != nil {
			return nil, err
		}
		t.Add("event", ev)
		source, destination = sw.Adjusted(debit, m.Now), dw.Adjusted(adj, m.Now)
		if t.held != nil && m.Receipt != nil {
			receipt, err := m.Receipt(source, destination)
			if err != nil {
				return nil, err
			}
			t.setReceipt(receipt)
		}
		return t, nil
	}, func(ctx context.Context, k dynamo.Cancellation) error {
		switch {
		case debtRaced(k):
			return dynamo.ErrRetry
		case k.Failed("rate"):
			return fx.ErrRateChanged
		case k.Failed("source"):
			return s.wallets.whyRefusedActive(ctx, m.CompanyID, src.WalletID, fx.ErrInsufficientBalance)
		case k.Failed("destination"):
			return s.wallets.whyRefusedActive(ctx, m.CompanyID, dst.WalletID, dynamo.ErrRetry)
		}
		return nil
	})
	if err != nil {
		return wallets.Wallet{}, wallets.Wallet{}, err
	}
	return source, destination, nil
}
