package cards

import (
	"context"
	"errors"
	"fmt"

	"payments/pkg/debts"
	"payments/pkg/events"
	"payments/pkg/ids"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// chargeFee takes fee (priced on amount base), of type feeType (events.FeeTypePaymentFailure or
// events.FeeTypeCrossborder), for card transaction tx into rec, in the
// order of spec §6.5 (take): from what the card has available
// (cardAvailable, as the rest of rec leaves it), then from the USD
// wallet's payout_available, and what is still missing becomes a debt. It
// sets tx's Fee, and returns the fee's events (and debt.recovery.pending)
// for the caller to add after the transaction's own.
func (s *Service) chargeFee(ctx context.Context, rec *Record, tx *Transaction, fee, base, cardAvailable int64, feeType string) ([]events.Payload, error) {
	if fee <= 0 {
		return nil, nil
	}
	now := rec.Now
	feeID := ids.NewV7(now)
	p, err := s.take(ctx, rec, tx, fee, cardAvailable, wallets.TypeFee, feeID, feeType)
	if err != nil {
		return nil, err
	}
	tx.Fee = fee
	c := events.FeeCharge{
		FeeID: feeID, TransactionID: tx.ID, CardID: tx.CardID, CustomerID: tx.CustomerID,
		Amount: moneyJSON(fee), Currency: Currency, FromCard: moneyJSON(p.fromCard), FromWallet: moneyJSON(p.fromWallet),
		DebtAmount: moneyJSON(p.owed), CreatedAt: timestamp.Format(now),
	}
	if p.fromWallet > 0 {
		c.WalletID = &p.walletID
	}
	if p.debt != nil {
		c.DebtID = &p.debt.ID
	}
	var out []events.Payload
	if feeType == events.FeeTypeCrossborder {
		out = append(out, events.FeeCrossborderChargedData{FeeCharge: c, TransactionAmount: moneyJSON(base)})
	} else {
		out = append(out, events.FeePaymentFailureChargedData{FeeCharge: c})
	}
	return append(out, p.events(tx)...), nil
}

// payment is how an amount was paid (take): from the card, from the USD
// wallet, and what neither could pay, owed as a debt.
type payment struct {
	fromCard, fromWallet, owed int64
	walletID                   string
	debt                       *debts.Debt
}

// events returns debt.recovery.pending for p's debt, if any.
func (p payment) events(tx *Transaction) []events.Payload {
	d := p.debt
	if d == nil {
		return nil
	}
	return []events.Payload{events.DebtRecoveryPendingData{
		DebtID: d.ID, FeeType: d.FeeType, TransactionID: tx.ID, CardID: tx.CardID, CustomerID: tx.CustomerID,
		Amount: moneyJSON(d.Amount), Currency: Currency, CreatedAt: timestamp.Format(d.CreatedAt),
	}}
}

// take takes amount for card transaction tx into rec, in the order of
// spec §6.5: from the card, at most backed (what the card has for it, as
// the rest of rec leaves it), then from the USD wallet's payout_available
// (a ledger entry of entryType, id entryID), and what is still missing
// becomes a debt of debtType (a fee's type, or what a card payment left
// owed). It moves tx's CardDelta and WalletDelta and sets its debt, and
// adds the card's and the wallet's changes, the entry and the debt to rec,
// whose conditions on the card's and the wallet's balances make a changed
// balance a lost race (ErrCardRefused, ErrChanged), tried again from fresh
// reads.
func (s *Service) take(ctx context.Context, rec *Record, tx *Transaction, amount, backed int64, entryType wallets.Type, entryID, debtType string) (payment, error) {
	now := rec.Now
	p := payment{fromCard: min(amount, max(backed, 0))}
	if rest := amount - p.fromCard; rest > 0 {
		w, err := s.Wallets.USDWallet(ctx, tx.CompanyID)
		switch {
		case errors.Is(err, wallets.ErrUSDWalletNotFound):
		case err != nil:
			return payment{}, fmt.Errorf("cards: read the USD wallet to pay %d for %s: %w", rest, tx.ID, err)
		case w.IsActive:
			p.fromWallet, p.walletID = min(rest, max(w.PayoutAvailable, 0)), w.ID
		}
	}
	p.owed = amount - p.fromCard - p.fromWallet
	tx.CardDelta, tx.WalletDelta = tx.CardDelta-p.fromCard, tx.WalletDelta-p.fromWallet
	rec.BalanceDelta -= p.fromCard
	if p.fromWallet > 0 {
		tx.WalletID, rec.WalletID = p.walletID, p.walletID
		rec.Wallet.Payout -= p.fromWallet
		rec.Entries = append(rec.Entries, entry(*tx, entryType, -p.fromWallet, entryID, now))
	}
	if p.owed > 0 {
		p.debt = &debts.Debt{
			ID: ids.NewV7(now), CompanyID: tx.CompanyID, FeeType: debtType, TransactionID: tx.ID,
			CardID: tx.CardID, CustomerID: tx.CustomerID, Amount: p.owed, Remaining: p.owed, Status: debts.Pending, CreatedAt: now,
		}
		tx.DebtID, tx.Debt, rec.Debt = p.debt.ID, p.owed, p.debt
	}
	return p, nil
}
