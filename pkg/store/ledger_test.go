package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"

	"payments/pkg/ids"
	"payments/pkg/store"
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

func TestApplyChange(t *testing.T) {
	db := storetest.NewDB(t)
	s := store.NewWallets(db)
	ctx := context.Background()
	company := uuid.NewString()
	w := newWallet(company, "XAF", "CM")
	if err := s.CreateWallet(ctx, w); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)

	first := fund(w, 1500, now)
	if err := s.ApplyChange(ctx, wallets.Change{Wallet: w, Adjust: wallets.Adjustment{Payin: 1500}, Entry: first, Reference: "r1", Now: now}); err != nil {
		t.Fatalf("ApplyChange: %v", err)
	}
	got, err := s.GetWallet(ctx, company, w.ID)
	if err != nil || got.PayinBalance != 1500 || got.Version != 2 || !got.UpdatedAt.Equal(now) {
		t.Fatalf("wallet after change = %+v, %v", got, err)
	}
	entry, err := s.GetTransaction(ctx, company, first.ID)
	if err != nil {
		t.Fatalf("GetTransaction: %v", err)
	}
	if entry.Delta != 1500 || *entry.BalanceAfter != 1500 || entry.Type != wallets.TypeFund ||
		!entry.CreatedAt.Equal(now) || !entry.CompletedAt.Equal(now) || entry.Balance != wallets.Payin {
		t.Fatalf("entry = %+v", entry)
	}

	tests := []struct {
		name   string
		change wallets.Change
		want   error
	}{
		{"stale version", wallets.Change{Wallet: w, Adjust: wallets.Adjustment{Payin: 1}, Entry: fund(w, 1, now)}, wallets.ErrStale},
		{"reference reused", wallets.Change{Wallet: got, Adjust: wallets.Adjustment{Payin: 1}, Entry: fund(got, 1, now), Reference: "r1"}, wallets.ErrDuplicateReference},
		{"overdraft of payout_available", wallets.Change{Wallet: got, Adjust: wallets.Adjustment{Reserved: 1}, Entry: fund(got, 0, now)}, wallets.ErrInsufficientFunds},
		{"overdraft of payin", wallets.Change{Wallet: got, Adjust: wallets.Adjustment{Payin: -1501}, Entry: fund(got, -1501, now)}, wallets.ErrInsufficientFunds},
		{"unknown wallet", wallets.Change{Wallet: newWallet(company, "XOF", "SN"), Adjust: wallets.Adjustment{Payin: 1}, Entry: fund(newWallet(company, "XOF", "SN"), 1, now)}, wallets.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.change.Now = now
			if err := s.ApplyChange(ctx, tt.change); !errors.Is(err, tt.want) {
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
	s := store.NewWallets(db)
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
		if err := s.ApplyChange(ctx, wallets.Change{Wallet: w, Adjust: wallets.Adjustment{Payin: 100}, Entry: e, Now: at}); err != nil {
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
			got, err := s.ListTransactions(ctx, company, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d entries, want %d", len(got), len(tt.want))
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

// TestApplyChangeConflict injects the TransactionCanceledException with a
// TransactionConflict reason that DynamoDB Local never raises, and checks
// that it reads as wallets.ErrStale (which the service retries).
func TestApplyChangeConflict(t *testing.T) {
	db := storetest.NewDB(t)
	ctx := context.Background()
	company := uuid.NewString()
	w := newWallet(company, "XAF", "CM")
	if err := store.NewWallets(db).CreateWallet(ctx, w); err != nil {
		t.Fatal(err)
	}
	inject := func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("injectConflict",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if _, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput); ok {
					return middleware.InitializeOutput{}, middleware.Metadata{}, &types.TransactionCanceledException{
						Message: aws.String("Transaction cancelled"),
						CancellationReasons: []types.CancellationReason{
							{Code: aws.String("TransactionConflict")}, {Code: aws.String("None")},
						},
					}
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
	}
	client := dynamodb.New(db.Client.Options(), func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, inject) })
	s := store.NewWallets(store.New(client, db.Table))
	now := time.Now()
	err := s.ApplyChange(ctx, wallets.Change{Wallet: w, Adjust: wallets.Adjustment{Payin: 1}, Entry: fund(w, 1, now), Now: now})
	if !errors.Is(err, wallets.ErrStale) {
		t.Fatalf("ApplyChange = %v, want ErrStale", err)
	}
	if err := s.CreateWallet(ctx, newWallet(company, "XOF", "CI")); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("CreateWallet = %v, want ErrConflict after its retries", err)
	}
}
