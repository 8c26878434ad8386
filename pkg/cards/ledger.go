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
//     below 0; 0 once FAILED, and once TERMINATED only what its open holds
//     keep (nothing available), until they are released to the wallet;
//     its holds are the sum of its authorizations' open holds, and never
//     more than its balance;
//   - each transaction moved what its type and status say (conserved);
//   - an authorization's settled and refunded amounts are the sums of its
//     settlements and refunds;
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
	byCard, heldBy := map[string]int64{}, map[string]int64{}
	byTx := map[string]int64{}
	for _, e := range entries {
		if e.Reference != "" {
			byTx[e.Reference] += e.Delta
		}
	}
	settled, refunded := map[string]int64{}, map[string]int64{}
	for _, t := range txs {
		byCard[t.CardID] += t.CardDelta
		heldBy[t.CardID] += t.Hold
		switch t.Type {
		case TxSettlement:
			settled[t.OriginalID] += t.Amount
		case TxRefund:
			refunded[t.OriginalID] += t.Amount
		}
		fee := int64(0) // what the wallet paid beside WalletDelta
		if t.Type == TxFunding && t.Status != TxFailed {
			fee = t.Fee
		}
		if got := byTx[t.ID]; got != t.WalletDelta-fee {
			bad("transaction %s: wallet entries sum to %d, want %d", t.ID, got, t.WalletDelta-fee)
		}
		if err := t.conserved(); err != nil {
			bad("transaction %s (%s %s): %v", t.ID, t.Type, t.Status, err)
		}
	}
	for _, t := range txs {
		if t.Type == TxAuthorization && (t.Settled != settled[t.ID] || t.Refunded != refunded[t.ID]) {
			bad("authorization %s: settled %d and refunded %d, its transactions %d and %d",
				t.ID, t.Settled, t.Refunded, settled[t.ID], refunded[t.ID])
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
		case c.Held != heldBy[c.ID]:
			bad("card %s: holds %d, open authorizations hold %d", c.ID, c.Held, heldBy[c.ID])
		case c.Balance < 0 || c.Held < 0:
			bad("card %s: balance %d, holds %d", c.ID, c.Balance, c.Held)
		case c.Status == Failed && (c.Balance != 0 || c.Held != 0),
			c.Status == Terminated && c.Available() > 0:
			bad("card %s: %s with balance %d, holds %d", c.ID, c.Status, c.Balance, c.Held)
		}
	}
	if used != live {
		bad("%d card slots used, %d live cards", used, live)
	}
	return errors.Join(errs...)
}

// conserved checks that t moved what its type and status say: a FAILED
// funding or withdrawal gave back what it took (to its source, or to the
// wallet for a card terminated since); a settled one as much into its
// destination as out of its source, fees aside (a funding's fee is paid
// by the wallet, a withdrawal's by the card); an open one only out of its
// source. A fee (a decline's, a cross-border charge) was paid by the card,
// the wallet and a debt together; an authorization moves no money (what
// it settled and refunded is the issuer's word, whatever it held), a
// reversal none but, for a terminated card, the hold it releases from the
// card to the wallet; a settlement's amount was paid by the card, the
// wallet and a debt together (and, for a terminated card, the rest of its
// hold went to the wallet); a refund gives its amount to the card or, for
// a terminated card, the wallet; a dispute's movement gives its amount to
// the card or the wallet, or takes it back from the card, the wallet and a
// debt together.
func (t Transaction) conserved() error {
	card, wallet := t.CardDelta, t.WalletDelta
	switch t.Type {
	case TxAuthorization:
		if card != 0 || wallet != 0 || t.Hold < 0 || t.Hold > t.Amount || t.Settled < 0 || t.Refunded < 0 {
			return fmt.Errorf("moved card %d, wallet %d; holds %d, settled %d, refunded %d of %d", card, wallet, t.Hold, t.Settled, t.Refunded, t.Amount)
		}
	case TxReversal:
		if card+wallet != 0 || wallet < 0 {
			return fmt.Errorf("moved card %d, wallet %d", card, wallet)
		}
	case TxSettlement:
		if card+wallet != t.Debt-t.Amount || card > 0 || t.Debt < 0 {
			return fmt.Errorf("paid card %d, wallet %d, debt %d for %d", -card, -wallet, t.Debt, t.Amount)
		}
	case TxRefund:
		if card+wallet != t.Amount || card < 0 || wallet < 0 {
			return fmt.Errorf("moved card %d, wallet %d for %d", card, wallet, t.Amount)
		}
	case TxDispute:
		credit := card >= 0 && wallet >= 0 && t.Debt == 0 && card+wallet == t.Amount
		debit := card <= 0 && wallet <= 0 && t.Debt >= 0 && t.Debt-card-wallet == t.Amount
		if !credit && !debit {
			return fmt.Errorf("dispute movement of %d: card %d, wallet %d, debt %d", t.Amount, card, wallet, t.Debt)
		}
	case TxDecline, TxCrossBorder:
		if card > 0 || wallet > 0 || t.Debt < 0 || t.Debt-card-wallet != t.Fee {
			return fmt.Errorf("fee %d paid by card %d, wallet %d, debt %d", t.Fee, -card, -wallet, t.Debt)
		}
	default:
		switch {
		case t.Status == TxFailed && card+wallet != 0:
			return fmt.Errorf("moved card %d, wallet %d: not given back", card, wallet)
		case t.Status == TxSuccess && t.Type == TxWithdrawal && card+wallet+t.Fee != 0,
			t.Status == TxSuccess && t.Type != TxWithdrawal && card+wallet != 0:
			return fmt.Errorf("moved card %d and wallet %d with fee %d: not conserved", card, wallet, t.Fee)
		case t.Status == TxProcessing && t.Type == TxFunding && (card != 0 || wallet != -t.Amount),
			t.Status == TxProcessing && t.Type == TxWithdrawal && (wallet != 0 || card != -(t.Amount+t.Fee)):
			return fmt.Errorf("open, moved card %d, wallet %d", card, wallet)
		}
	}
	return nil
}
