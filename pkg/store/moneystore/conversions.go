package moneystore

import (
	"context"
	"fmt"

	"payments/pkg/fx"
	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/wallets"
)

var _ fx.Mover = (*Conversions)(nil)

// Conversions writes the movements of money between two wallets of a
// company at a quoted rate (package fx): conversions and deposits. A
// movement is one TransactWriteItems: its posting (post), the source's leg
// (wallet: its adjustment, activeOnly, and entry0) and the destination's
// (wallet1 and entry1), the rate's ConditionCheck (rate, rateCheck) and
// the event (store.Txn.AddEvent). A credit to the payout balance of a USD wallet
// first pays the company's pending debts, four more items a debt:
// DynamoDB Local's ten leave room for one.
type Conversions struct {
	db      *store.DB
	wallets *Wallets
	rates   *Rates
}

// NewConversions returns the movements store on db.
func NewConversions(db *store.DB) *Conversions {
	return &Conversions{db: db, wallets: NewWallets(db), rates: NewRates(db)}
}

// Move writes m in one transaction: the source's payin balance debited by
// -m.Source.Delta on the condition that it covers it and that the wallet is
// active, the destination's payout balance credited by m.Destination.Delta
// (less the debts it pays, when it is a USD wallet) on the condition that
// it is active, both entries with the balances before and after them (see
// Wallets.post), the check that m.Rate.ID is still the pair's version, and
// the event. It returns both wallets after it. A changed rate is
// fx.ErrRateChanged; a short source, wallets.ErrInsufficientWalletBalance;
// an inactive wallet, wallets.ErrInactive. A debt another write paid first
// is a race lost: the transaction is built again from fresh reads.
func (s *Conversions) Move(ctx context.Context, m fx.Movement) (source, destination wallets.Wallet, err error) {
	src, dst := m.Source, m.Destination
	switch {
	case src.Balance != wallets.Payin || src.Delta >= 0 || dst.Balance != wallets.Payout || dst.Delta <= 0:
		return source, destination, fmt.Errorf("store: movement %s does not move payin to payout", m.ID)
	case src.WalletID == dst.WalletID || src.CompanyID != m.CompanyID || dst.CompanyID != m.CompanyID:
		return source, destination, fmt.Errorf("store: movement %s is not between two wallets of its company", m.ID)
	}
	p, err := wallets.NewPosting(m.CompanyID, m.Now,
		wallets.Leg{WalletID: src.WalletID, Adjust: wallets.Adjustment{Payin: src.Delta}, ActiveOnly: true, Entries: []wallets.Transaction{src}},
		wallets.Leg{WalletID: dst.WalletID, Adjust: wallets.Adjustment{Payout: dst.Delta}, ActiveOnly: true, Entries: []wallets.Transaction{dst}})
	if err != nil {
		return source, destination, fmt.Errorf("store: movement %s: %w", m.ID, err)
	}
	err = s.db.Commit(ctx, "move "+m.ID, func(ctx context.Context) (*store.Txn, error) {
		t := &store.Txn{}
		s.db.RecordEffect(ctx, t, m.ID, nil)
		t.Add(schema.RateItem, s.rates.rateCheck(m.CompanyID, m.Rate.From, m.Rate.To, m.Rate.ID))
		t.Finishes(m.ID)
		t.AddEvent(schema.EventItem, m.Event)
		legs, err := s.wallets.post(ctx, t, p)
		if err != nil {
			return nil, err
		}
		source, destination = legs[0].After, legs[1].After
		if t.RecordsEffect() && m.Receipt != nil {
			receipt, err := m.Receipt(source, destination)
			if err != nil {
				return nil, err
			}
			t.SetReceipt(receipt)
		}
		return t, nil
	}, func(ctx context.Context, k dynamo.Cancellation) error {
		switch {
		case debtRaced(k):
			return dynamo.ErrRetry
		case k.Failed(schema.RateItem):
			return fx.ErrRateChanged
		case k.Failed(schema.WalletLegItem(0)):
			return s.wallets.whyRefusedActive(ctx, m.CompanyID, src.WalletID, wallets.ErrInsufficientWalletBalance)
		case k.Failed(schema.WalletLegItem(1)):
			return s.wallets.whyRefusedActive(ctx, m.CompanyID, dst.WalletID, dynamo.ErrRetry)
		}
		return nil
	})
	if err != nil {
		return wallets.Wallet{}, wallets.Wallet{}, err
	}
	return source, destination, nil
}
