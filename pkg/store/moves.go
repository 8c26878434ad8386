package store

import (
	"context"
	"fmt"
	"strconv"

	"payments/pkg/store/dynamo"
	"payments/pkg/wallets"
)

// ApplyMove writes m in one transaction (wallets.MoveStore): the wallet
// adjusted, on the condition that it is active and that no balance goes
// below 0; m's entries, each with the balances before and after it in
// turn, starting from the wallet as read just before the write (see
// balancesOf); and m's event, which the caller publishes after the commit.
// A credit to the payout balance of a USD wallet first pays the company's
// pending debts in the same transaction (payDebts); the wallet returned is
// the wallet after both.
func (s *Wallets) ApplyMove(ctx context.Context, m wallets.Move) (wallets.Wallet, error) {
	if err := checkMove(m); err != nil {
		return wallets.Wallet{}, err
	}
	var after wallets.Wallet
	err := s.db.write(ctx, "move in wallet "+m.WalletID, func(ctx context.Context) (*txn, error) {
		w, err := s.GetWallet(ctx, m.CompanyID, m.WalletID)
		if err != nil {
			return nil, err
		}
		t := &txn{}
		s.db.recordEffect(ctx, t, m.ID, nil)
		adj, err := s.payDebts(ctx, t, w, m.Adjust, len(m.Entries)+2, m.Now) // the entries, the wallet and the event
		if err != nil {
			return nil, err
		}
		after = w.Adjusted(adj, m.Now)
		t.Add("wallet", activeOnly(s.walletAdjustment(m.CompanyID, m.WalletID, adj, m.Now)))
		balance := map[wallets.SubBalance]int64{wallets.Payin: w.PayinBalance, wallets.Payout: w.PayoutBalance}
		for i, e := range m.Entries {
			before, next := balance[e.Balance], balance[e.Balance]+e.Delta
			e.BalanceBefore, e.BalanceAfter, balance[e.Balance] = &before, &next, next
			put, err := s.ledgerPut(e)
			if err != nil {
				return nil, err
			}
			t.Add("entry"+strconv.Itoa(i), put)
		}
		put, err := eventPut(s.db.Table, m.Event)
		if err != nil {
			return nil, err
		}
		t.Add("event", put)
		if t.held != nil && m.Receipt != nil {
			receipt, err := m.Receipt(after)
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
		case k.Failed("wallet"):
			return s.whyRefusedActive(ctx, m.CompanyID, m.WalletID, wallets.ErrInsufficientBalance)
		}
		return nil
	})
	if err != nil {
		return wallets.Wallet{}, err
	}
	return after, nil
}

// checkMove refuses a move whose entries do not add up to its adjustment,
// or that touches payout_reserved: the ledger invariant would break.
func checkMove(m wallets.Move) error {
	var sum wallets.Adjustment
	for _, e := range m.Entries {
		if e.CompanyID != m.CompanyID || e.WalletID != m.WalletID {
			return fmt.Errorf("store: move in wallet %s: entry %s is another wallet's", m.WalletID, e.ID)
		}
		switch e.Balance {
		case wallets.Payin:
			sum.Payin += e.Delta
		case wallets.Payout:
			sum.Payout += e.Delta
		default:
			return fmt.Errorf("store: move in wallet %s: entry %s has no sub-balance", m.WalletID, e.ID)
		}
	}
	if sum != m.Adjust || m.Adjust.Reserved != 0 {
		return fmt.Errorf("store: move in wallet %s: entries add up to %+v, the adjustment is %+v", m.WalletID, sum, m.Adjust)
	}
	return nil
}
