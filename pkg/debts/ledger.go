package debts

import (
	"context"
	"errors"
	"fmt"

	"payments/pkg/wallets"
)

// ErrLedgerMismatch is a broken debt invariant (see VerifyLedger).
var ErrLedgerMismatch = errors.New("debts: debts do not match the ledger")

// LedgerReader is what VerifyLedger reads.
type LedgerReader interface {
	// All reads every debt of the company.
	All(ctx context.Context, companyID string) ([]Debt, error)
	// Pending reads the company's pending markers.
	Pending(ctx context.Context, companyID string) ([]Debt, error)
}

// VerifyLedger checks the company's debts against the wallet ledger w:
//
//   - a debt owes 0 to its amount; it is RECOVERED, with recovered_at,
//     exactly when it owes nothing;
//   - what was recovered of it (amount − remaining) is what the FEE ledger
//     entries referencing it took from the wallet;
//   - the pending markers are the pending debts, as they are.
func VerifyLedger(ctx context.Context, r LedgerReader, w wallets.LedgerReader, companyID string) error {
	all, err := r.All(ctx, companyID)
	if err != nil {
		return fmt.Errorf("debts: verify ledger: %w", err)
	}
	markers, err := r.Pending(ctx, companyID)
	if err != nil {
		return fmt.Errorf("debts: verify ledger: %w", err)
	}
	entries, err := w.AllTransactions(ctx, companyID)
	if err != nil {
		return fmt.Errorf("debts: verify ledger: %w", err)
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s", ErrLedgerMismatch, fmt.Sprintf(format, args...)))
	}
	paid := map[string]int64{}
	for _, e := range entries {
		if e.Type == wallets.TypeFee {
			paid[e.Reference] -= e.Delta
		}
	}
	marked := map[string]Debt{}
	for _, m := range markers {
		marked[m.ID] = m
	}
	for _, d := range all {
		switch {
		case d.Remaining < 0 || d.Remaining > d.Amount:
			bad("debt %s owes %d of %d", d.ID, d.Remaining, d.Amount)
		case (d.Remaining == 0) != (d.Status == Recovered), (d.Status == Recovered) != (d.RecoveredAt != nil):
			bad("debt %s is %s owing %d", d.ID, d.Status, d.Remaining)
		case paid[d.ID] != d.Amount-d.Remaining:
			bad("debt %s: %d recovered, the ledger paid %d", d.ID, d.Amount-d.Remaining, paid[d.ID])
		}
		m, ok := marked[d.ID]
		switch {
		case d.Status == Pending && (!ok || m.Remaining != d.Remaining):
			bad("pending debt %s owes %d, its marker %v %d", d.ID, d.Remaining, ok, m.Remaining)
		case d.Status != Pending && ok:
			bad("debt %s is %s but still marked pending", d.ID, d.Status)
		}
		delete(marked, d.ID)
	}
	for id := range marked {
		bad("marker %s names no debt", id)
	}
	return errors.Join(errs...)
}
