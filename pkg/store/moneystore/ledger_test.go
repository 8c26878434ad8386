package moneystore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/contention"
	"payments/pkg/ids"
	"payments/pkg/page"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/storetest"
	"payments/pkg/wallets"
)

// fund returns a FUND entry of amount on the payin balance of w at at.
func fund(w wallets.Wallet, amount int64, at time.Time) wallets.Transaction {
	before, after := w.PayinBalance, w.PayinBalance+amount
	return wallets.Transaction{
		ID: ids.NewV7(at), CompanyID: w.CompanyID, WalletID: w.ID,
		Amount: amount, AmountWithFee: amount, NetAmount: amount, Currency: w.Currency,
		Status: wallets.StatusSuccess, Type: wallets.TypeFund, Reference: "ref",
		BalanceBefore: &before, BalanceAfter: &after, Balance: wallets.Payin, Delta: amount,
		CreatedAt: at, CompletedAt: &at,
	}
}

// reservation returns a PENDING WITHDRAW entry of w that holds amount in
// payout_reserved.
func reservation(w wallets.Wallet, amount int64, at time.Time) wallets.Transaction {
	return wallets.Transaction{
		ID: ids.NewV7(at), CompanyID: w.CompanyID, WalletID: w.ID,
		Amount: amount, AmountWithFee: amount, NetAmount: amount, Currency: w.Currency,
		Status: wallets.StatusPending, Type: wallets.TypeWithdraw, Reference: "ref",
		Balance: wallets.Payout, Reserved: amount, CreatedAt: at,
	}
}

func TestApplyChange(t *testing.T) {
	db := storetest.NewDB(t)
	s := moneystore.NewWallets(db)
	ctx := context.Background()
	company := uuid.NewString()
	w := newWallet(company, "XAF", "CM")
	if err := s.CreateWallet(ctx, w); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	change := func(w wallets.Wallet, adj wallets.Adjustment, e wallets.Transaction, ref string) wallets.Change {
		return wallets.Change{CompanyID: w.CompanyID, WalletID: w.ID, Adjust: adj, Entry: e, Reference: ref, Now: now}
	}

	first := fund(w, 1500, now)
	after, written, err := s.ApplyChange(ctx, change(w, wallets.Adjustment{Payin: 1500}, first, "r1"))
	if err != nil {
		t.Fatalf("ApplyChange: %v", err)
	}
	got, err := s.GetWallet(ctx, company, w.ID)
	if err != nil || got.PayinBalance != 1500 || got.Version != 2 || !got.UpdatedAt.Equal(now) || got != after {
		t.Fatalf("wallet after change = %+v, %v; ApplyChange said %+v", got, err, after)
	}
	entry, err := s.GetTransaction(ctx, company, first.ID)
	if err != nil {
		t.Fatalf("GetTransaction: %v", err)
	}
	if entry.Delta != 1500 || *entry.BalanceBefore != 0 || *entry.BalanceAfter != 1500 || entry.Type != wallets.TypeFund ||
		!entry.CreatedAt.Equal(now) || !entry.CompletedAt.Equal(now) || entry.Balance != wallets.Payin || *written.BalanceAfter != 1500 {
		t.Fatalf("entry = %+v", entry)
	}
	claim, err := s.CreditByReference(ctx, company, "r1")
	if err != nil || claim.TransactionID != first.ID || claim.Amount != 1500 || claim.Balance != wallets.Payin || claim.WalletID != w.ID {
		t.Fatalf("CreditByReference = %+v, %v", claim, err)
	}

	other := newWallet(company, "XOF", "SN")
	tests := []struct {
		name   string
		change wallets.Change
		want   error
	}{
		{"reference reused", change(got, wallets.Adjustment{Payin: 1}, fund(got, 1, now), "r1"), wallets.ErrDuplicateReference},
		{"overdraft of payout_available", change(got, wallets.Adjustment{Reserved: 1}, reservation(got, 1, now), ""), wallets.ErrInsufficientBalance},
		{"overdraft of payin", change(got, wallets.Adjustment{Payin: -1501}, fund(got, -1501, now), ""), wallets.ErrInsufficientBalance},
		{"unknown wallet", change(other, wallets.Adjustment{Payin: 1}, fund(other, 1, now), ""), wallets.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := s.ApplyChange(ctx, tt.change); !errors.Is(err, tt.want) {
				t.Fatalf("ApplyChange = %v, want %v", err, tt.want)
			}
		})
	}
	if err := wallets.VerifyLedger(ctx, s, company); err != nil {
		t.Fatalf("VerifyLedger: %v", err)
	}

	t.Run("another company's entry is not found", func(t *testing.T) {
		if _, err := s.GetTransaction(ctx, uuid.NewString(), first.ID); !errors.Is(err, wallets.ErrTransactionNotFound) {
			t.Fatalf("GetTransaction = %v", err)
		}
	})
}

func TestListTransactions(t *testing.T) {
	db := storetest.NewDB(t)
	s := moneystore.NewWallets(db)
	ctx := context.Background()
	company := uuid.NewString()
	a, b := newWallet(company, "XAF", "CM"), newWallet(company, "XOF", "SN")
	for _, w := range []wallets.Wallet{a, b} {
		if err := s.CreateWallet(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	// One entry per minute, alternating wallets: entry i at base + i minutes.
	var ids []string
	for i := range 6 {
		w := a
		if i%2 == 1 {
			w = b
		}
		w, _ = s.GetWallet(ctx, company, w.ID)
		at := base.Add(time.Duration(i) * time.Minute)
		e := fund(w, 100, at)
		if _, _, err := s.ApplyChange(ctx, wallets.Change{CompanyID: company, WalletID: w.ID, Adjust: wallets.Adjustment{Payin: 100}, Entry: e, Now: at}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	tests := []struct {
		name string
		q    wallets.TransactionQuery
		want []int // indexes into ids, newest first
	}{
		{"all", wallets.TransactionQuery{}, []int{5, 4, 3, 2, 1, 0}},
		{"wallet", wallets.TransactionQuery{WalletID: b.ID}, []int{5, 3, 1}},
		{"currency", wallets.TransactionQuery{Currency: "XAF"}, []int{4, 2, 0}},
		{"from inclusive", wallets.TransactionQuery{From: base.Add(2 * time.Minute)}, []int{5, 4, 3, 2}},
		{"to exclusive", wallets.TransactionQuery{To: base.Add(2 * time.Minute)}, []int{1, 0}},
		{"to within a millisecond", wallets.TransactionQuery{To: base.Add(2*time.Minute + 500*time.Microsecond)}, []int{2, 1, 0}},
		{"from and to on a wallet", wallets.TransactionQuery{WalletID: a.ID, From: base.Add(time.Minute), To: base.Add(5 * time.Minute)}, []int{4, 2}},
		{"type", wallets.TransactionQuery{Type: wallets.TypeWithdraw}, nil},
		{"status", wallets.TransactionQuery{Status: wallets.StatusSuccess, WalletID: a.ID}, []int{4, 2, 0}},
		{"before everything", wallets.TransactionQuery{To: base}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := s.ListTransactions(ctx, company, tt.q, page.Request{Page: 1, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			got := res.Items
			if len(got) != len(tt.want) || res.Total != len(tt.want) || res.Next != "" {
				t.Fatalf("got %d entries (total %d, next %q), want %d", len(got), res.Total, res.Next, len(tt.want))
			}
			for i, idx := range tt.want {
				if got[i].ID != ids[idx] {
					t.Errorf("entry %d = %s, want entry %d", i, got[i].ID, idx)
				}
			}
		})
	}
	if err := wallets.VerifyLedger(ctx, s, company); err != nil {
		t.Fatalf("VerifyLedger: %v", err)
	}
}

// TestWritesRetryConflicts injects the TransactionConflict cancellations
// that DynamoDB Local never raises: every write tries again under the one
// retry policy, and one that keeps losing is contention.ErrConflict.
func TestWritesRetryConflicts(t *testing.T) {
	db := storetest.NewDB(t)
	ctx := context.Background()
	company := uuid.NewString()
	w := newWallet(company, "XAF", "CM")
	if err := moneystore.NewWallets(db).CreateWallet(ctx, w); err != nil {
		t.Fatal(err)
	}
	attempts := int64(contention.Retry.Attempts)
	tests := []struct {
		name      string
		conflicts int64
		write     func(*moneystore.Wallets) error
		want      error
		calls     int64
	}{
		{"credit, two conflicts", 2, func(s *moneystore.Wallets) error {
			now := time.Now()
			_, _, err := s.ApplyChange(ctx, wallets.Change{CompanyID: company, WalletID: w.ID, Adjust: wallets.Adjustment{Payin: 1}, Entry: fund(w, 1, now), Now: now})
			return err
		}, nil, 3},
		{"credit, endless conflicts", 1000, func(s *moneystore.Wallets) error {
			now := time.Now()
			_, _, err := s.ApplyChange(ctx, wallets.Change{CompanyID: company, WalletID: w.ID, Adjust: wallets.Adjustment{Payin: 1}, Entry: fund(w, 1, now), Now: now})
			return err
		}, contention.ErrConflict, attempts},
		{"wallet creation, endless conflicts", 1000, func(s *moneystore.Wallets) error {
			return s.CreateWallet(ctx, newWallet(company, "XOF", "CI"))
		}, contention.ErrConflict, attempts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conflicting, calls := storetest.WithConflicts(db, tt.conflicts)
			if err := tt.write(moneystore.NewWallets(conflicting)); !errors.Is(err, tt.want) || calls.Load() != tt.calls {
				t.Fatalf("err %v after %d calls, want %v after %d", err, calls.Load(), tt.want, tt.calls)
			}
		})
	}
	if err := wallets.VerifyLedger(ctx, moneystore.NewWallets(db), company); err != nil {
		t.Fatal(err)
	}
}
