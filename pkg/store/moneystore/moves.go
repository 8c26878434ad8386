package moneystore

import (
	"context"
	"fmt"

	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/wallets"
)

// ApplyMove writes m in one transaction (wallets.MoveStore): its posting
// (post: the wallet adjusted, on the condition that it is active and that
// no balance goes below 0; m's entries, each with the balances before and
// after it in turn, starting from the wallet as read just before the
// write) and m's event, which the caller publishes after the commit. A
// credit to the payout balance of a USD wallet first pays the company's
// pending debts in the same transaction; the wallet returned is the wallet
// after both.
func (s *Wallets) ApplyMove(ctx context.Context, m wallets.Move) (wallets.Wallet, error) {
	if m.Adjust.Reserved != 0 {
		return wallets.Wallet{}, fmt.Errorf("store: move in wallet %s touches payout_reserved", m.WalletID)
	}
	p, err := wallets.NewPosting(m.CompanyID, m.Now, wallets.Leg{WalletID: m.WalletID, Adjust: m.Adjust, ActiveOnly: true, Entries: m.Entries})
	if err != nil {
		return wallets.Wallet{}, fmt.Errorf("store: move in wallet %s: %w", m.WalletID, err)
	}
	var after wallets.Wallet
	err = s.db.Commit(ctx, "move in wallet "+m.WalletID, func(ctx context.Context) (*store.Txn, error) {
		t := &store.Txn{}
		s.db.RecordEffect(ctx, t, m.ID, nil)
		t.Finishes(m.ID)
		t.AddEvent(schema.EventItem, m.Event)
		legs, err := s.post(ctx, t, p)
		if err != nil {
			return nil, err
		}
		after = legs[0].After
		if t.RecordsEffect() && m.Receipt != nil {
			receipt, err := m.Receipt(after)
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
		case k.Failed(schema.WalletItem):
			return s.whyRefusedActive(ctx, m.CompanyID, m.WalletID, wallets.ErrInsufficientBalance)
		}
		return nil
	})
	if err != nil {
		return wallets.Wallet{}, err
	}
	return after, nil
}
