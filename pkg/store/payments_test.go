package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"payments/pkg/events"
	"payments/pkg/ids"
	"payments/pkg/payments"
	"payments/pkg/store"
	"payments/pkg/store/storetest"
	"payments/pkg/wallets"
)

// conflicts returns a fault injector that cancels the first n transactions
// with TransactionConflict (DynamoDB Local never raises it) and counts the
// calls.
func conflicts(n int, calls *int) func(store.TransactFunc) store.TransactFunc {
	return func(real store.TransactFunc) store.TransactFunc {
		return func(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
			*calls++
			if *calls <= n {
				reasons := make([]types.CancellationReason, len(in.TransactItems))
				for i := range reasons {
					reasons[i].Code = aws.String("None")
				}
				reasons[len(reasons)-1].Code = aws.String("TransactionConflict")
				return nil, &types.TransactionCanceledException{Message: aws.String("conflict"), CancellationReasons: reasons}
			}
			return real(ctx, in, o...)
		}
	}
}

// newPayout returns a PENDING payout of amount + fee from w, its
// reservation entry and its event.
func newPayout(w wallets.Wallet, amount, fee int64, externalID string) (payments.Payment, wallets.Transaction, events.Event) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	p := payments.Payment{
		ID: ids.NewV7(now), CompanyID: w.CompanyID, ExternalID: externalID, Type: payments.TypePayout,
		Status: payments.StatusPending, Amount: amount, Fee: fee, Currency: w.Currency, Country: w.CountryISOCode,
		Operator: "mtn", PhoneNumber: "237670000001", WalletID: w.ID, EntryID: ids.NewV7(now),
		CreatedAt: now, UpdatedAt: now,
	}
	entry := wallets.Transaction{
		ID: p.EntryID, CompanyID: w.CompanyID, WalletID: w.ID, Amount: amount, AmountWithFee: amount + fee,
		FeeAmount: fee, NetAmount: amount, Currency: w.Currency, Status: wallets.StatusPending,
		Type: wallets.TypeWithdraw, Reference: externalID, Balance: wallets.Payout, Reserved: amount + fee,
		PaymentID: p.ID, CreatedAt: now,
	}
	ev, _ := events.New(w.CompanyID, events.PayoutStatusUpdated, map[string]string{"transaction_id": p.ID}, now)
	return p, entry, ev
}

// TestCreatePayoutRetriesConflicts: a few conflicts are retried, endless
// ones end in payments.ErrBusy; either way the ledger holds.
func TestCreatePayoutRetriesConflicts(t *testing.T) {
	tests := []struct {
		conflicts int
		want      error
		calls     int
	}{
		{0, nil, 1}, {3, nil, 4}, {100, payments.ErrBusy, 8},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.conflicts), func(t *testing.T) {
			ctx := context.Background()
			db := storetest.NewDB(t)
			ws := store.NewWallets(db)
			w := newWallet(uuid.NewString(), "XAF", "CM")
			w.PayoutBalance, w.PayoutAvailable = 1000, 1000
			if err := ws.CreateWallet(ctx, w); err != nil {
				t.Fatal(err)
			}
			// The wallet's opening balance needs its ledger entry.
			if err := ws.ApplyChange(ctx, wallets.Change{Wallet: w, Entry: fundPayout(w)}); err != nil {
				t.Fatal(err)
			}
			st := store.NewPayments(db)
			calls := 0
			store.InjectTransactFaultsForTest(st, conflicts(tt.conflicts, &calls))
			p, entry, ev := newPayout(w, 100, 2, "order-1")
			err := st.CreatePayout(ctx, p, entry, ev)
			if !errors.Is(err, tt.want) || calls != tt.calls {
				t.Fatalf("err %v after %d calls, want %v after %d", err, calls, tt.want, tt.calls)
			}
			got, _ := ws.GetWallet(ctx, w.CompanyID, w.ID)
			if reserved := map[bool]int64{true: 102, false: 0}[tt.want == nil]; got.PayoutReserved != reserved {
				t.Fatalf("reserved %d, want %d", got.PayoutReserved, reserved)
			}
			if err := wallets.VerifyLedger(ctx, ws, w.CompanyID); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// fundPayout returns an entry explaining the payout balance a test wallet
// was created with.
func fundPayout(w wallets.Wallet) wallets.Transaction {
	at := time.Now().UTC()
	e := fund(w, w.PayoutBalance, at)
	e.Balance = wallets.Payout
	e.Delta = w.PayoutBalance
	return e
}

// TestCreatePayoutRefusals maps each failed condition to its error.
func TestCreatePayoutRefusals(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	ws := store.NewWallets(db)
	st := store.NewPayments(db)
	w := newWallet(uuid.NewString(), "XAF", "CM")
	w.PayoutBalance, w.PayoutAvailable = 100, 100
	if err := ws.CreateWallet(ctx, w); err != nil {
		t.Fatal(err)
	}
	p, e, ev := newPayout(w, 90, 10, "order-1")
	if err := st.CreatePayout(ctx, p, e, ev); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		amount int64
		extID  string
		wallet func(wallets.Wallet) wallets.Wallet
		want   error
	}{
		{"insufficient", 1, "order-2", nil, payments.ErrInsufficientBalance},
		{"duplicate", 1, "order-1", nil, payments.ErrDuplicateExternalID},
		{"no wallet", 1, "order-3", func(w wallets.Wallet) wallets.Wallet { w.ID = uuid.NewString(); return w }, wallets.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := w
			if tt.wallet != nil {
				w = tt.wallet(w)
			}
			p, e, ev := newPayout(w, tt.amount, 0, tt.extID)
			if err := st.CreatePayout(ctx, p, e, ev); !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
		})
	}
}

// TestApplyTransitionConditions: a transition from a status the payment
// has left is ErrStatusChanged; one on a wallet that moved is ErrStale;
// conflicts are retried.
func TestApplyTransitionConditions(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	ws := store.NewWallets(db)
	st := store.NewPayments(db)
	w := newWallet(uuid.NewString(), "XAF", "CM")
	w.PayoutBalance, w.PayoutAvailable = 100, 100
	if err := ws.CreateWallet(ctx, w); err != nil {
		t.Fatal(err)
	}
	p, e, ev := newPayout(w, 90, 10, "order-1")
	if err := st.CreatePayout(ctx, p, e, ev); err != nil {
		t.Fatal(err)
	}
	read, _ := ws.GetWallet(ctx, w.CompanyID, w.ID)
	next := p
	next.Status = payments.StatusFailed
	next.ErrorMessage = "recipient account not found"
	failed := payments.Transition{
		From: payments.StatusPending, Payment: next, Wallet: &read,
		Adjust: wallets.Adjustment{Reserved: -100},
		Entry:  &payments.EntryChange{ID: p.EntryID, From: wallets.StatusPending, To: wallets.StatusFailed},
		Now:    time.Now(),
	}
	stale := failed
	older := read
	older.Version--
	stale.Wallet = &older
	if err := st.ApplyTransition(ctx, stale); !errors.Is(err, wallets.ErrStale) {
		t.Fatalf("stale wallet: %v", err)
	}
	calls := 0
	store.InjectTransactFaultsForTest(st, conflicts(2, &calls))
	if err := st.ApplyTransition(ctx, failed); err != nil || calls != 3 {
		t.Fatalf("transition: %v after %d calls", err, calls)
	}
	if err := st.ApplyTransition(ctx, failed); !errors.Is(err, payments.ErrStatusChanged) {
		t.Fatalf("second transition: %v", err)
	}
	got, err := st.GetPayment(ctx, w.CompanyID, p.ID)
	if err != nil || got.Status != payments.StatusFailed || got.ErrorMessage != next.ErrorMessage {
		t.Fatalf("payment %+v %v", got, err)
	}
	if open, err := st.OpenPayments(ctx, time.Now().Add(time.Hour), 10); err != nil || len(open) != 0 {
		t.Fatalf("open payments %v %v", open, err)
	}
	after, _ := ws.GetWallet(ctx, w.CompanyID, w.ID)
	if after.PayoutReserved != 0 || after.PayoutAvailable != 100 {
		t.Fatalf("wallet %+v", after)
	}
}
