package wallets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"payments/pkg/httpapi"
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
	// Reference, when not empty, may be used once per company: a second
	// credit with it is refused with ErrDuplicateReference.
	Reference string
}

// Credit adds in.Amount to a sub-balance of wallet walletID, whatever its
// company (operator console): one transaction updates the wallet,
// conditioned on the version read, and writes a FUND ledger entry with
// status SUCCESS (and the reference claim). A lost race is retried from a
// fresh read, at most MaxAttempts times, then ErrBusy. It returns the
// wallet after the credit and the ledger entry.
func (s *Service) Credit(ctx context.Context, walletID string, in CreditInput) (Wallet, Transaction, error) {
	if in.Balance != Payin && in.Balance != Payout {
		if in.Balance == "" {
			return Wallet{}, Transaction{}, httpapi.Invalid("balance", "is required")
		}
		return Wallet{}, Transaction{}, httpapi.Invalid("balance", `must be "payin" or "payout"`)
	}
	if in.Amount == "" {
		return Wallet{}, Transaction{}, httpapi.Invalid("amount", "is required")
	}
	if err := checkReference(in.Reference); err != nil {
		return Wallet{}, Transaction{}, err
	}
	if !ids.IsUUID(walletID) {
		return Wallet{}, Transaction{}, ErrNotFound
	}
	companyID, err := s.store.WalletCompany(ctx, walletID)
	if err != nil {
		return Wallet{}, Transaction{}, err
	}
	for attempt := 1; ; attempt++ {
		w, err := s.store.GetWallet(ctx, companyID, walletID)
		if err != nil {
			return Wallet{}, Transaction{}, err
		}
		amount, err := money.ParseAmount(json.RawMessage(in.Amount), w.Currency)
		if err != nil {
			return Wallet{}, Transaction{}, httpapi.Invalid("amount", err.Error())
		}
		if !w.IsActive {
			return Wallet{}, Transaction{}, ErrInactive
		}
		before := w.SubBalance(in.Balance)
		if before > math.MaxInt64/2-amount {
			return Wallet{}, Transaction{}, httpapi.Invalid("amount", "would take the balance out of range")
		}
		after := before + amount
		now := s.now()
		e := Transaction{
			ID:            ids.NewV7(now),
			CompanyID:     companyID,
			WalletID:      walletID,
			Amount:        amount,
			AmountWithFee: amount,
			NetAmount:     amount,
			Currency:      w.Currency,
			Status:        StatusSuccess,
			Type:          TypeFund,
			Reference:     in.Reference,
			BalanceBefore: &before,
			BalanceAfter:  &after,
			Balance:       in.Balance,
			Delta:         amount,
			CreatedAt:     now,
			CompletedAt:   &now,
		}
		if e.Reference == "" {
			e.Reference = e.ID
		}
		adj := Adjustment{Payin: amount}
		if in.Balance == Payout {
			adj = Adjustment{Payout: amount}
		}
		err = s.store.ApplyChange(ctx, Change{Wallet: w, Adjust: adj, Entry: e, Reference: in.Reference, Now: now})
		if err == nil {
			return w.adjusted(adj, now), e, nil
		}
		if !errors.Is(err, ErrStale) {
			if errors.Is(err, ErrDuplicateReference) {
				return Wallet{}, Transaction{}, err
			}
			return Wallet{}, Transaction{}, fmt.Errorf("wallets: credit %s: %w", walletID, err)
		}
		if attempt >= MaxAttempts {
			return Wallet{}, Transaction{}, fmt.Errorf("wallets: credit %s after %d attempts: %w", walletID, attempt, ErrBusy)
		}
		select {
		case <-ctx.Done():
			return Wallet{}, Transaction{}, ctx.Err()
		case <-time.After(s.Backoff(attempt)):
		}
	}
}

// adjusted returns w after adj was applied by one write at now.
func (w Wallet) adjusted(adj Adjustment, now time.Time) Wallet {
	w.PayinBalance += adj.Payin
	w.PayoutBalance += adj.Payout
	w.PayoutReserved += adj.Reserved
	w.PayoutAvailable += adj.Available()
	w.Version++
	w.UpdatedAt = now
	return w
}

// checkReference accepts "" (no reference) or 1 to 255 printable ASCII
// characters: the reference becomes part of a DynamoDB key.
func checkReference(ref string) error {
	if len(ref) > MaxReferenceLength {
		return httpapi.Invalid("reference", fmt.Sprintf("must be at most %d characters", MaxReferenceLength))
	}
	for i := 0; i < len(ref); i++ {
		if ref[i] < 0x20 || ref[i] > 0x7e {
			return httpapi.Invalid("reference", "must be printable ASCII characters")
		}
	}
	return nil
}

// backoff waits a random time of up to 5 ms per attempt, at most 100 ms,
// so that racing writers spread out.
func backoff(n int) time.Duration {
	ceiling := min(time.Duration(n)*5*time.Millisecond, 100*time.Millisecond)
	return time.Duration(rand.Int64N(int64(ceiling) + 1))
}
