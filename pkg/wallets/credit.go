package wallets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"payments/pkg/field"
	"payments/pkg/ids"
	"payments/pkg/money"
)

// MaxReferenceLength is the longest credit reference accepted.
const MaxReferenceLength = 255

// CreditInput is a sandbox funding of one sub-balance of a wallet.
type CreditInput struct {
	// Balance is the sub-balance to credit.
	Balance SubBalance
	// Amount is the amount's JSON value as received: a number of major
	// units, at least 1 (money.ParseAmount).
	Amount string
	// Reference names the credit, once per company: the same reference with
	// the same wallet, sub-balance and amount is the same credit (answered
	// again, not applied again); with anything else it is
	// ErrDuplicateReference.
	Reference string
}

// Credit is the result of a sandbox credit.
type Credit struct {
	// Wallet is the wallet after the credit (as it is now, for a replay).
	Wallet Wallet
	// Transaction is the credit's FUND ledger entry.
	Transaction Transaction
	// Replayed is true when the reference named a credit already applied:
	// nothing was applied this time.
	Replayed bool
}

// Credit adds in.Amount to a sub-balance of wallet walletID, whatever its
// company (operator console), in one transaction: the wallet, a FUND ledger
// entry with status SUCCESS, and the claim of the reference. It is
// idempotent on the reference. Outside sandbox mode it is ErrCreditDisabled
// unless the deployment allows it.
func (s *Service) Credit(ctx context.Context, walletID string, in CreditInput) (Credit, error) {
	if !s.CreditEnabled {
		return Credit{}, ErrCreditDisabled
	}
	if in.Balance != Payin && in.Balance != Payout {
		if in.Balance == "" {
			return Credit{}, field.Invalid("balance", "is required")
		}
		return Credit{}, field.Invalid("balance", `must be "payin" or "payout"`)
	}
	if in.Amount == "" {
		return Credit{}, field.Invalid("amount", "is required")
	}
	if err := checkReference(in.Reference); err != nil {
		return Credit{}, err
	}
	if !ids.IsUUID(walletID) {
		return Credit{}, ErrNotFound
	}
	companyID, err := s.store.WalletCompany(ctx, walletID)
	if err != nil {
		return Credit{}, err
	}
	w, err := s.store.GetWallet(ctx, companyID, walletID)
	if err != nil {
		return Credit{}, err
	}
	amount, err := money.ParseAmount(json.RawMessage(in.Amount), w.Currency)
	if err != nil {
		return Credit{}, field.Invalid("amount", err.Error())
	}
	if !w.IsActive {
		// A retry of a credit made before the wallet was deactivated is
		// still answered with it.
		if c, err := s.replayCredit(ctx, companyID, walletID, in.Balance, amount, in.Reference); err == nil {
			return c, nil
		}
		return Credit{}, ErrInactive
	}
	if w.SubBalance(in.Balance) > math.MaxInt64/2-amount {
		return Credit{}, field.Invalid("amount", "would take the balance out of range")
	}
	now := s.now()
	e := Completed(ids.NewV7(now), w, TypeFund, in.Reference, in.Balance, amount, now)
	adj := Adjustment{Payin: amount}
	if in.Balance == Payout {
		adj = Adjustment{Payout: amount}
	}
	after, entry, err := s.store.ApplyChange(ctx, Change{
		CompanyID: companyID, WalletID: walletID, Adjust: adj, Entry: e, Reference: in.Reference, Now: now,
	})
	switch {
	case errors.Is(err, ErrDuplicateReference):
		return s.replayCredit(ctx, companyID, walletID, in.Balance, amount, in.Reference)
	case err != nil:
		return Credit{}, fmt.Errorf("wallets: credit %s: %w", walletID, err)
	}
	return Credit{Wallet: after, Transaction: entry}, nil
}

// replayCredit answers a credit whose reference is already claimed: the
// first credit when it was the same one, else ErrDuplicateReference.
func (s *Service) replayCredit(ctx context.Context, companyID, walletID string, b SubBalance, amount int64, ref string) (Credit, error) {
	prior, err := s.store.CreditByReference(ctx, companyID, ref)
	if err != nil {
		return Credit{}, fmt.Errorf("wallets: read credit %q: %w", ref, err)
	}
	if prior.WalletID != walletID || prior.Balance != b || prior.Amount != amount {
		return Credit{}, ErrDuplicateReference
	}
	t, err := s.store.GetTransaction(ctx, companyID, prior.TransactionID)
	if err != nil {
		return Credit{}, fmt.Errorf("wallets: read credit %q: %w", ref, err)
	}
	w, err := s.store.GetWallet(ctx, companyID, walletID)
	if err != nil {
		return Credit{}, err
	}
	return Credit{Wallet: w, Transaction: t, Replayed: true}, nil
}

// Adjusted returns w after adj was applied by one write at now.
func (w Wallet) Adjusted(adj Adjustment, now time.Time) Wallet {
	w.PayinBalance += adj.Payin
	w.PayoutBalance += adj.Payout
	w.PayoutReserved += adj.Reserved
	w.PayoutAvailable += adj.Available()
	w.Version++
	w.UpdatedAt = now
	return w
}

// checkReference requires 1 to 255 printable ASCII characters: the
// reference becomes part of a DynamoDB key.
func checkReference(ref string) error {
	switch {
	case ref == "":
		return field.Invalid("reference", "is required: it makes the credit safe to retry")
	case len(ref) > MaxReferenceLength:
		return field.Invalid("reference", fmt.Sprintf("must be at most %d characters", MaxReferenceLength))
	}
	for i := 0; i < len(ref); i++ {
		if ref[i] < 0x20 || ref[i] > 0x7e {
			return field.Invalid("reference", "must be printable ASCII characters")
		}
	}
	return nil
}
