package moneystore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/contention"
	"payments/pkg/events"
	"payments/pkg/ids"
	"payments/pkg/payments"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/schema"
	"payments/pkg/store/storetest"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// newPayout returns a PENDING payout of amount + fee from w, its
// reservation entry and its event.
func newPayout(w wallets.Wallet, amount, fee int64, externalID string) (payments.Payment, wallets.Transaction, events.Event) {
	now := timestamp.Of(time.Now())
	p := payments.Payment{
		ID: ids.NewV7(now), CompanyID: w.CompanyID, ExternalID: externalID, Type: payments.TypePayout,
		Status: payments.StatusPending, Amount: amount, Fee: fee, Currency: w.Currency, Country: w.CountryISOCode,
		Operator: "mtn", PhoneNumber: "237670000001", WalletID: w.ID, EntryID: ids.NewV7(now),
		NextPollAt: now, CreatedAt: now, UpdatedAt: now,
	}
	entry := wallets.Transaction{
		ID: p.EntryID, CompanyID: w.CompanyID, WalletID: w.ID, Amount: amount, AmountWithFee: amount + fee,
		FeeAmount: fee, NetAmount: amount, Currency: w.Currency, Status: wallets.StatusPending,
		Type: wallets.TypeWithdraw, Reference: externalID, Balance: wallets.Payout, Reserved: amount + fee,
		PaymentID: p.ID, CreatedAt: now,
	}
	ev, _ := events.New(w.CompanyID, events.PayoutStatusUpdated, map[string]string{"transaction_id": p.ID}, now)
	ev.Object = p.ID
	return p, entry, ev
}

// accept writes the acceptance of a payout of amount + fee from w.
func accept(t *testing.T, st *moneystore.Payments, w wallets.Wallet, amount, fee int64, externalID string) payments.Payment {
	t.Helper()
	p, e, ev := newPayout(w, amount, fee, externalID)
	if err := st.CreatePayout(context.Background(), p, e, ev); err != nil {
		t.Fatal(err)
	}
	return p
}

// fundedWallet creates a wallet of a new company with payout balance
// amount, credited through the ledger.
func fundedWallet(t *testing.T, db *store.DB, amount int64) wallets.Wallet {
	t.Helper()
	ctx := context.Background()
	ws := moneystore.NewWallets(db)
	w := newWallet(uuid.NewString(), "XAF", "CM")
	if err := ws.CreateWallet(ctx, w); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	e := fund(w, amount, now)
	e.Balance = wallets.Payout
	w, _, err := ws.ApplyChange(ctx, wallets.Change{CompanyID: w.CompanyID, WalletID: w.ID, Adjust: wallets.Adjustment{Payout: amount}, Entry: e, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestCreatePayoutRetriesConflicts: conflicts are tried again under the
// retry policy; endless ones end in contention.ErrConflict; either way the
// ledger holds.
func TestCreatePayoutRetriesConflicts(t *testing.T) {
	tests := []struct {
		conflicts int64
		want      error
		calls     int64
	}{
		{0, nil, 1}, {3, nil, 4}, {100, contention.ErrConflict, int64(contention.Retry.Attempts)},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.conflicts), func(t *testing.T) {
			ctx := context.Background()
			db := storetest.NewDB(t)
			w := fundedWallet(t, db, 1000)
			conflicting, calls := storetest.WithConflicts(db, tt.conflicts)
			p, entry, ev := newPayout(w, 100, 2, "order-1")
			err := moneystore.NewPayments(conflicting).CreatePayout(ctx, p, entry, ev)
			if !errors.Is(err, tt.want) || calls.Load() != tt.calls {
				t.Fatalf("err %v after %d calls, want %v after %d", err, calls.Load(), tt.want, tt.calls)
			}
			ws := moneystore.NewWallets(db)
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

// TestCreatePayoutRefusals maps each failed condition, read by name, to its
// error.
func TestCreatePayoutRefusals(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	st := moneystore.NewPayments(db)
	w := fundedWallet(t, db, 100)
	p := accept(t, st, w, 90, 10, "order-1")
	tests := []struct {
		name   string
		amount int64
		extID  string
		wallet func(wallets.Wallet) wallets.Wallet
		want   error
	}{
		{"insufficient", 1, "order-2", nil, wallets.ErrInsufficientBalance},
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
	got, err := st.PaymentByID(ctx, p.ID)
	if err != nil || got.CompanyID != w.CompanyID || got.ExternalID != "order-1" {
		t.Fatalf("PaymentByID = %+v, %v", got, err)
	}
	if _, err := st.PaymentByID(ctx, uuid.NewString()); !errors.Is(err, payments.ErrNotFound) {
		t.Fatalf("PaymentByID of an unknown id = %v", err)
	}
}

// settle returns the SUCCESS transition of a PROCESSING payout p.
func settle(p payments.Payment) payments.Transition {
	next := p
	next.Status = payments.StatusSuccess
	next.NextPollAt = time.Time{}
	total := p.Amount + p.Fee
	return payments.Transition{
		From: p.Status, Payment: next,
		Adjust: wallets.Adjustment{Payout: -total, Reserved: -total},
		Entry:  &payments.EntryChange{ID: p.EntryID, From: wallets.Status(p.Status), To: wallets.StatusSuccess, Delta: -total, Held: total},
		Now:    time.Now(),
	}
}

// TestApplyTransitionConditions: a transition from a status the payment
// has left is ErrStatusChanged; conflicts are tried again; a settled payout
// leaves both indexes and records exact balances.
func TestApplyTransitionConditions(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	st := moneystore.NewPayments(db)
	ws := moneystore.NewWallets(db)
	w := fundedWallet(t, db, 1000)
	p := accept(t, st, w, 90, 10, "order-1")
	conflicting, calls := storetest.WithConflicts(db, 2)
	if err := moneystore.NewPayments(conflicting).ApplyTransition(ctx, settle(p)); err != nil || calls.Load() != 3 {
		t.Fatalf("transition: %v after %d calls", err, calls.Load())
	}
	if err := st.ApplyTransition(ctx, settle(p)); !errors.Is(err, payments.ErrStatusChanged) {
		t.Fatalf("second transition: %v", err)
	}
	got, err := st.GetPayment(ctx, w.CompanyID, p.ID)
	if err != nil || got.Status != payments.StatusSuccess || !got.NextPollAt.IsZero() {
		t.Fatalf("payment %+v %v", got, err)
	}
	if due, err := st.DuePayments(ctx, time.Now().Add(time.Hour), 10); err != nil || len(due) != 0 {
		t.Fatalf("due payments %v %v", due, err)
	}
	entry, _ := ws.GetTransaction(ctx, w.CompanyID, p.EntryID)
	if entry.Status != wallets.StatusSuccess || *entry.BalanceBefore != 1000 || *entry.BalanceAfter != 900 {
		t.Fatalf("entry %+v", entry)
	}
	if err := wallets.VerifyLedger(ctx, ws, w.CompanyID); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentSettlements settles many payouts of one wallet at once,
// each once and at the first try: no settlement waits for the wallet's
// version or for the others, and the ledger holds.
func TestConcurrentSettlements(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	db.Retry.Attempts = 1 // nothing to retry: DynamoDB Local raises no conflicts
	st := moneystore.NewPayments(db)
	ws := moneystore.NewWallets(db)
	w := fundedWallet(t, db, 10_000)
	const n = 12
	var ps []payments.Payment
	for i := range n {
		ps = append(ps, accept(t, st, w, 100, 0, fmt.Sprint("order-", i)))
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, p := range ps {
		wg.Go(func() { errs[i] = st.ApplyTransition(ctx, settle(p)) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	got, _ := ws.GetWallet(ctx, w.CompanyID, w.ID)
	if got.PayoutBalance != 10_000-n*100 || got.PayoutReserved != 0 {
		t.Fatalf("wallet %+v", got)
	}
	for _, p := range ps {
		e, _ := ws.GetTransaction(ctx, w.CompanyID, p.EntryID)
		if e.Status != wallets.StatusSuccess || e.Delta != -100 || *e.BalanceAfter != *e.BalanceBefore-100 {
			t.Fatalf("entry %+v", e)
		}
	}
	if err := wallets.VerifyLedger(ctx, ws, w.CompanyID); err != nil {
		t.Fatal(err)
	}
}

// TestRescheduleAndIndexes: Reschedule moves a payment in the open-payment
// index and flags it into the reconciliation list, only from the due it
// was read with; a final transition takes it out of both.
func TestRescheduleAndIndexes(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	st := moneystore.NewPayments(db)
	w := fundedWallet(t, db, 1000)
	p := accept(t, st, w, 90, 10, "order-1")
	due, err := st.DuePayments(ctx, p.NextPollAt.Add(time.Millisecond), 10)
	if err != nil || len(due) != 1 || due[0].ID != p.ID || due[0].CompanyID != w.CompanyID {
		t.Fatalf("due = %v, %v", due, err)
	}

	next := p
	next.NextPollAt = p.NextPollAt.Add(15 * time.Minute)
	next.ReconciliationRequired = true
	if err := st.Reschedule(ctx, next, p.NextPollAt); err != nil {
		t.Fatal(err)
	}
	if err := st.Reschedule(ctx, next, p.NextPollAt); !errors.Is(err, payments.ErrStatusChanged) {
		t.Fatalf("a second reschedule from the old due = %v", err)
	}
	if due, _ := st.DuePayments(ctx, p.NextPollAt.Add(time.Minute), 10); len(due) != 0 {
		t.Fatalf("still due before its new time: %v", due)
	}
	flagged, _, err := st.FlaggedPayments(ctx, "", 10)
	if err != nil || len(flagged) != 1 || flagged[0].ID != p.ID || !flagged[0].ReconciliationRequired {
		t.Fatalf("flagged = %+v, %v", flagged, err)
	}

	stopped := next
	stopped.NextPollAt = time.Time{}
	if err := st.Reschedule(ctx, stopped, next.NextPollAt); err != nil {
		t.Fatal(err)
	}
	if due, _ := st.DuePayments(ctx, p.NextPollAt.Add(time.Hour), 10); len(due) != 0 {
		t.Fatalf("a stopped payment is still due: %v", due)
	}
	resolved := settle(stopped)
	resolved.Flagged = true
	resolved.Payment.Resolution = &payments.Resolution{Status: payments.StatusSuccess, Note: "operator statement", By: "ops", At: time.Now()}
	if err := st.ApplyTransition(ctx, resolved); err != nil {
		t.Fatal(err)
	}
	if flagged, _, _ := st.FlaggedPayments(ctx, "", 10); len(flagged) != 0 {
		t.Fatalf("a final payment is still flagged: %+v", flagged)
	}
	got, _ := st.GetPayment(ctx, w.CompanyID, p.ID)
	if got.Resolution == nil || got.Resolution.By != "ops" || got.Resolution.Note != "operator statement" {
		t.Fatalf("resolution %+v", got.Resolution)
	}
}

// TestFlaggedTransitionNeedsTheFlag: a console resolution of a payment the
// worker is still handling (not flagged) is refused by its condition.
func TestFlaggedTransitionNeedsTheFlag(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	st := moneystore.NewPayments(db)
	w := fundedWallet(t, db, 1000)
	p := accept(t, st, w, 90, 10, "order-1")
	tr := settle(p)
	tr.Flagged = true
	if err := st.ApplyTransition(ctx, tr); !errors.Is(err, payments.ErrStatusChanged) {
		t.Fatalf("resolution of an unflagged payment = %v", err)
	}
}

// TestDuePaymentsReadsEveryShard spreads payments over the shards of the
// open-payment index and finds them all.
func TestDuePaymentsReadsEveryShard(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	st := moneystore.NewPayments(db)
	w := fundedWallet(t, db, 100_000)
	want := map[string]bool{}
	for i := range 40 {
		p, e, ev := newPayout(w, 10, 0, fmt.Sprint("order-", i))
		if err := st.CreatePayout(ctx, p, e, ev); err != nil {
			t.Fatal(err)
		}
		want[p.ID] = true
	}
	if n := storetest.DistinctGSI2Partitions(t, db, schema.OpenPaymentIndex+"#"); n < 8 {
		t.Fatalf("40 payments use %d shards", n)
	}
	due, err := st.DuePayments(ctx, time.Now().Add(time.Minute), 1000)
	if err != nil || len(due) != len(want) {
		t.Fatalf("due %d, %v; want %d", len(due), err, len(want))
	}
	for _, r := range due {
		if !want[r.ID] {
			t.Fatalf("unexpected %v", r)
		}
	}
	if due, _ := st.DuePayments(ctx, time.Now().Add(time.Minute), 7); len(due) != 7 {
		t.Fatalf("limit 7 gave %d", len(due))
	}
}

// TestFlaggedPaymentsPages walks the console's list of flagged payments of
// two companies a page at a time, and counts them.
func TestFlaggedPaymentsPages(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	st := moneystore.NewPayments(db)
	var want []string
	for range 2 {
		w := fundedWallet(t, db, 1000)
		for i := range 2 {
			p, e, ev := newPayout(w, 10, 0, fmt.Sprint("order-", i))
			if err := st.CreatePayout(ctx, p, e, ev); err != nil {
				t.Fatal(err)
			}
			flagged := p
			flagged.ReconciliationRequired = true
			if err := st.Reschedule(ctx, flagged, p.NextPollAt); err != nil {
				t.Fatal(err)
			}
			want = append(want, p.ID)
		}
	}
	slices.Sort(want) // ids are UUID v7: the list is oldest first
	var got []string
	after, pages := "", 0
	for {
		ps, next, err := st.FlaggedPayments(ctx, after, 3)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, p := range ps {
			got = append(got, p.ID)
		}
		if next == "" {
			break
		}
		after = next
	}
	if !slices.Equal(got, want) || pages != 2 {
		t.Fatalf("%d pages of %v, want 2 pages of %v", pages, got, want)
	}
	if n, err := st.CountFlaggedPayments(ctx); err != nil || n != len(want) {
		t.Fatalf("CountFlaggedPayments = %d, %v, want %d", n, err, len(want))
	}
}

// TestSubmissionRecord: MarkSubmitting records a submission on a PENDING
// payment only; a write of the whole payment read before it (NotSubmitted)
// is refused, so a stale copy never fails as unsent, nor reschedules as
// unsent, a payment being submitted.
func TestSubmissionRecord(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	st := moneystore.NewPayments(db)
	w := fundedWallet(t, db, 1000)
	p, e, ev := newPayout(w, 90, 10, "order-1")
	p.Submission = payments.NotSubmitted
	if err := st.CreatePayout(ctx, p, e, ev); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetPayment(ctx, w.CompanyID, p.ID); got.Submission != payments.NotSubmitted {
		t.Fatalf("stored as %q", got.Submission)
	}
	if err := st.MarkSubmitting(ctx, w.CompanyID, p.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetPayment(ctx, w.CompanyID, p.ID); got.Submission != payments.Submitting || got.Status != payments.StatusPending {
		t.Fatalf("after MarkSubmitting %+v", got)
	}
	stale := p // read before the mark
	failed := stale
	failed.Status, failed.NextPollAt = payments.StatusFailed, time.Time{}
	unsent := payments.Transition{
		From: payments.StatusPending, Payment: failed, Adjust: wallets.Adjustment{Reserved: -100},
		Entry: &payments.EntryChange{ID: p.EntryID, From: wallets.StatusPending, To: wallets.StatusFailed, Held: 100},
		Now:   time.Now(),
	}
	if err := st.ApplyTransition(ctx, unsent); !errors.Is(err, payments.ErrStatusChanged) {
		t.Fatalf("failing a payment being submitted from a stale copy = %v", err)
	}
	later := stale
	later.NextPollAt = stale.NextPollAt.Add(time.Minute)
	if err := st.Reschedule(ctx, later, stale.NextPollAt); !errors.Is(err, payments.ErrStatusChanged) {
		t.Fatalf("rescheduling from a stale copy = %v", err)
	}
	later.Submission = payments.Submitting
	if err := st.Reschedule(ctx, later, stale.NextPollAt); err != nil {
		t.Fatalf("rescheduling the marked payment: %v", err)
	}
	if got, _ := st.GetPayment(ctx, w.CompanyID, p.ID); got.Submission != payments.Submitting {
		t.Fatalf("the record was taken back: %+v", got)
	}

	// A final payment is not marked.
	q := accept(t, st, w, 90, 10, "order-2")
	if err := st.ApplyTransition(ctx, settle(q)); err != nil {
		t.Fatal(err)
	}
	if err := st.MarkSubmitting(ctx, w.CompanyID, q.ID); !errors.Is(err, payments.ErrStatusChanged) {
		t.Fatalf("MarkSubmitting of a final payment = %v", err)
	}
	if err := wallets.VerifyLedger(ctx, moneystore.NewWallets(db), w.CompanyID); err != nil {
		t.Fatal(err)
	}
}
