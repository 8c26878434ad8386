package cards

import (
	"context"
	"errors"
	"fmt"

	"payments/pkg/wallets"
)

// ErrLedgerMismatch is a broken card invariant (see VerifyLedger).
var ErrLedgerMismatch = errors.New("cards: cards do not match their transactions")

// LedgerReader is what VerifyLedger reads.
type LedgerReader interface {
	Cards(ctx context.Context, companyID string) ([]Card, error)
	Transactions(ctx context.Context, companyID string) ([]Transaction, error)
	SlotsUsed(ctx context.Context, companyID string) (int, error)
}

// VerifyLedger checks the company's cards against their transactions and
// the wallet ledger w:
//
//   - a card's balance is the sum of its transactions' CardDelta, never
//     below 0, and 0 once TERMINATED or FAILED;
//   - each transaction moved what its status says: a FAILED one gave back
//     what it took (to its source, or to the wallet for a card terminated
//     since); a settled one as much into its destination as out of its
//     source, fees aside (a funding's fee is paid by the wallet, a
//     withdrawal's by the card); an open one only out of its source;
//   - the wallet ledger entries of a transaction sum to its WalletDelta,
//     less the funding fee the wallet paid;
//   - the slots used are the live cards.
func VerifyLedger(ctx context.Context, r LedgerReader, w wallets.LedgerReader, companyID string) error {
	cs, err := r.Cards(ctx, companyID)
	if err != nil {
		return fmt.Errorf("cards: verify ledger: %w", err)
	}
	txs, err := r.Transactions(ctx, companyID)
	if err != nil {
		return fmt.Errorf("cards: verify ledger: %w", err)
	}
	entries, err := w.AllTransactions(ctx, companyID)
	if err != nil {
		return fmt.Errorf("cards: verify ledger: %w", err)
	}
	used, err := r.SlotsUsed(ctx, companyID)
	if err != nil {
		return fmt.Errorf("cards: verify ledger: %w", err)
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s", ErrLedgerMismatch, fmt.Sprintf(format, args...)))
	}
	byCard := map[string]int64{}
	byTx := map[string]int64{}
	for _, e := range entries {
		if e.Reference != "" {
			byTx[e.Reference] += e.Delta
		}
	}
	for _, t := range txs {
		byCard[t.CardID] += t.CardDelta
		fee := int64(0) // what the wallet paid beside WalletDelta
		if t.Type == TxFunding && t.Status != TxFailed {
			fee = t.Fee
		}
		if got := byTx[t.ID]; got != t.WalletDelta-fee {
			bad("transaction %s: wallet entries sum to %d, want %d", t.ID, got, t.WalletDelta-fee)
		}
		switch {
		case t.Status == TxFailed && t.CardDelta+t.WalletDelta != 0:
			bad("failed transaction %s moved card %d, wallet %d: not given back", t.ID, t.CardDelta, t.WalletDelta)
		case t.Status == TxSuccess && t.Type == TxWithdrawal && t.CardDelta+t.WalletDelta+t.Fee != 0,
			t.Status == TxSuccess && t.Type != TxWithdrawal && t.CardDelta+t.WalletDelta != 0:
			bad("transaction %s moved card %d and wallet %d with fee %d: not conserved", t.ID, t.CardDelta, t.WalletDelta, t.Fee)
		case t.Status == TxProcessing && t.Type == TxFunding && (t.CardDelta != 0 || t.WalletDelta != -t.Amount),
			t.Status == TxProcessing && t.Type == TxWithdrawal && (t.WalletDelta != 0 || t.CardDelta != -(t.Amount+t.Fee)):
			bad("open transaction %s moved card %d, wallet %d", t.ID, t.CardDelta, t.WalletDelta)
		}
	}
	live := 0
	for _, c := range cs {
		if c.Status.Live() {
			live++
		}
		switch {
		case c.Balance != byCard[c.ID]:
			bad("card %s: balance %d, transactions sum to %d", c.ID, c.Balance, byCard[c.ID])
		case c.Balance < 0:
			bad("card %s: balance %d below 0", c.ID, c.Balance)
		case !c.Status.Live() && c.Balance != 0:
			bad("card %s: %s with balance %d", c.ID, c.Status, c.Balance)
		}
	}
	if used != live {
		bad("%d card slots used, %d live cards", used, live)
	}
	return errors.Join(errs...)
}
