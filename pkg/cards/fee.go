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
// order of spec §6.5: from what the card has available (cardAvailable, as
// the rest of rec leaves it), then from the USD wallet's payout_available,
// and what is still missing becomes a debt. It sets tx's Fee, deltas and
// debt, adds the card's and the wallet's changes, the ledger entry and the
// debt to rec, and returns the fee's events (and debt.recovery.pending)
// for the caller to add after the transaction's own. rec's conditions on
// the card's and the wallet's balances make a changed balance a lost race
// (ErrCardRefused, ErrChanged), tried again from fresh reads.
func (s *Service) chargeFee(ctx context.Context, rec *Record, tx *Transaction, fee, base, cardAvailable int64, feeType string) ([]events.Payload, error) {
	if fee <= 0 {
		return nil, nil
	}
	now := rec.Now
	fromCard := min(fee, max(cardAvailable, 0))
	fromWallet, walletID := int64(0), ""
	if rest := fee - fromCard; rest > 0 {
		w, err := s.Wallets.USDWallet(ctx, tx.CompanyID)
		switch {
		case errors.Is(err, wallets.ErrUSDWalletNotFound):
		case err != nil:
			return nil, fmt.Errorf("cards: read the USD wallet for a fee: %w", err)
		case w.IsActive:
			fromWallet, walletID = min(rest, max(w.PayoutAvailable, 0)), w.ID
		}
	}
	owed := fee - fromCard - fromWallet
	tx.Fee, tx.CardDelta, tx.WalletDelta = fee, tx.CardDelta-fromCard, -fromWallet
	rec.BalanceDelta -= fromCard
	c := events.FeeCharge{
		FeeID: ids.NewV7(now), TransactionID: tx.ID, CardID: tx.CardID, CustomerID: tx.CustomerID,
		Amount: moneyJSON(fee), Currency: Currency, FromCard: moneyJSON(fromCard), FromWallet: moneyJSON(fromWallet),
		DebtAmount: moneyJSON(owed), CreatedAt: timestamp.Format(now),
	}
	if fromWallet > 0 {
		tx.WalletID, rec.WalletID = walletID, walletID
		rec.Wallet.Payout -= fromWallet
		e := entry(*tx, wallets.TypeFee, -fromWallet, c.FeeID, now)
		rec.Entries = append(rec.Entries, e)
		c.WalletID = &walletID
	}
	var d *debts.Debt
	if owed > 0 {
		d = &debts.Debt{
			ID: ids.NewV7(now), CompanyID: tx.CompanyID, FeeType: feeType, TransactionID: tx.ID,
			CardID: tx.CardID, CustomerID: tx.CustomerID, Amount: owed, Remaining: owed, Status: debts.Pending, CreatedAt: now,
		}
		tx.DebtID, tx.Debt, rec.Debt, c.DebtID = d.ID, owed, d, &d.ID
	}
	var out []events.Payload
	if feeType == events.FeeTypeCrossborder {
		out = append(out, events.FeeCrossborderChargedData{FeeCharge: c, TransactionAmount: moneyJSON(base)})
	} else {
		out = append(out, events.FeePaymentFailureChargedData{FeeCharge: c})
	}
	if d != nil {
		out = append(out, events.DebtRecoveryPendingData{
			DebtID: d.ID, FeeType: feeType, TransactionID: tx.ID, CardID: tx.CardID, CustomerID: tx.CustomerID,
			Amount: moneyJSON(owed), Currency: Currency, CreatedAt: timestamp.Format(now),
		})
	}
	return out, nil
}
