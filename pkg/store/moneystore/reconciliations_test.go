package moneystore_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/ids"
	"payments/pkg/page"
	"payments/pkg/reconcile"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/storetest"
	"payments/pkg/timestamp"
)

// TestReconciliationRuns: a run starts only as the provider's latest read
// (two starts from the same read: one wins); its saves hold while its lease
// does, and one of another lease is refused; it is taken over only once its
// lease has ended; completed, it moves the provider's window on; the
// reports list newest first, a page at a time, and an unknown one is
// ErrNotFound.
func TestReconciliationRuns(t *testing.T) {
	ctx := context.Background()
	s := moneystore.NewReconciliations(storetest.NewDB(t))
	now := timestamp.Of(time.Now())
	if st, err := s.State(ctx, reconcile.Issuer); err != nil || st != (reconcile.State{}) {
		t.Fatalf("a provider never run: %+v, %v", st, err)
	}
	run := func(at time.Time, lease string) reconcile.Report {
		return reconcile.Report{ID: ids.NewV7(at), Provider: reconcile.Issuer, Status: reconcile.Running,
			Window: reconcile.Window{From: at.Add(-time.Hour), To: at}, StartedAt: at, UpdatedAt: at,
			Progress: reconcile.Progress{Phase: "authorizations", Unseen: []string{"a|b|c|||0"}}, Lease: lease, LeaseUntil: at.Add(time.Minute)}
	}
	first := run(now, "lease-1")
	if err := s.Start(ctx, first, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx, run(now.Add(time.Millisecond), "lease-x"), ""); !errors.Is(err, reconcile.ErrBusy) {
		t.Fatalf("a second start from the same read: %v, want ErrBusy", err)
	}
	if _, err := s.Take(ctx, first.ID, "lease-2", now.Add(time.Hour), now); !errors.Is(err, reconcile.ErrBusy) {
		t.Fatalf("taken while leased: %v, want ErrBusy", err)
	}
	first.Matched, first.Progress.After = 3, "ntx_1"
	if err := s.Save(ctx, first); err != nil {
		t.Fatal(err)
	}
	stolen := first
	stolen.Lease = "lease-x"
	if err := s.Save(ctx, stolen); !errors.Is(err, reconcile.ErrBusy) {
		t.Fatalf("a save under another lease: %v, want ErrBusy", err)
	}
	taken, err := s.Take(ctx, first.ID, "lease-2", now.Add(2*time.Hour), now.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if taken.Lease != "lease-2" || taken.Matched != 3 || taken.Progress.After != "ntx_1" || !slices.Equal(taken.Progress.Unseen, first.Progress.Unseen) {
		t.Fatalf("taken over: %+v, want where the first stood, leased to the second", taken)
	}
	if err := s.Save(ctx, first); !errors.Is(err, reconcile.ErrBusy) {
		t.Fatalf("the first invocation's save after the take-over: %v, want ErrBusy", err)
	}
	if st, _ := s.State(ctx, reconcile.Issuer); st.Latest != first.ID || !st.LatestAt.Equal(now) || !st.CompletedTo.IsZero() {
		t.Fatalf("state while running: %+v", st)
	}
	done := taken
	done.Status, done.Progress, done.FinishedAt = reconcile.Completed, reconcile.Progress{}, &now
	amount := int64(-5)
	done.Mismatches = []reconcile.Mismatch{{Kind: reconcile.KindAmount, Subject: reconcile.SubjectTransaction, ProviderID: "ipi_1",
		ProviderAmount: &amount, Detail: "d"}}
	done.MismatchCount = 1
	if err := s.Save(ctx, done); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.State(ctx, reconcile.Issuer); st.CompletedTo.Equal(done.Window.To) == false {
		t.Fatalf("state once completed: %+v, want its window's end", st)
	}
	got, err := s.Get(ctx, first.ID)
	if err != nil || got.Status != reconcile.Completed || len(got.Mismatches) != 1 || *got.Mismatches[0].ProviderAmount != -5 || got.Mismatches[0].OurAmount != nil {
		t.Fatalf("read back: %+v, %v", got, err)
	}
	second := run(now.Add(time.Hour), "lease-3")
	if err := s.Start(ctx, second, ""); !errors.Is(err, reconcile.ErrBusy) {
		t.Fatalf("a start from a stale read: %v, want ErrBusy", err)
	}
	if err := s.Start(ctx, second, first.ID); err != nil {
		t.Fatal(err)
	}
	operator := run(now.Add(2*time.Hour), "lease-4")
	operator.Provider = reconcile.Operator
	if err := s.Start(ctx, operator, ""); err != nil {
		t.Fatalf("another provider's first run: %v", err)
	}
	p1, err := s.List(ctx, page.Request{Page: 1, Limit: 2})
	if err != nil || p1.Total != 3 || len(p1.Items) != 2 || p1.Items[0].ID != operator.ID || p1.Items[1].ID != second.ID || p1.Next == "" {
		t.Fatalf("first page: %+v, %v", p1, err)
	}
	p2, err := s.List(ctx, page.Request{Page: 1, Limit: 2}.Following(p1.Next, p1.Total))
	if err != nil || len(p2.Items) != 1 || p2.Items[0].ID != first.ID || p2.Next != "" {
		t.Fatalf("second page: %+v, %v", p2, err)
	}
	if _, err := s.Get(ctx, uuid.NewString()); !errors.Is(err, reconcile.ErrNotFound) {
		t.Fatalf("an unknown report: %v, want ErrNotFound", err)
	}
}

// TestCreatedPaymentsAndCardBalances: the payments of every company created
// in a window are listed once each, a page after another across the
// index's shards, none outside it; the cards' balances of every company are
// summed.
func TestCreatedPaymentsAndCardBalances(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	ps := moneystore.NewPayments(db)
	before := time.Now().Add(-time.Second)
	var want []string
	for range 2 {
		w := fundedWallet(t, db, 100_000)
		for range 4 {
			want = append(want, accept(t, ps, w, 1000, 15, uuid.NewString()).ID)
		}
	}
	after := time.Now().Add(time.Second)
	var got []string
	after2 := ""
	for pages := 0; ; pages++ {
		items, next, err := ps.CreatedPayments(ctx, before, after, after2, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range items {
			got = append(got, p.ID)
		}
		if next == "" {
			break
		}
		if pages > 10 {
			t.Fatal("the pages never end")
		}
		after2 = next
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
	if items, _, err := ps.CreatedPayments(ctx, after, after.Add(time.Hour), "", 10); err != nil || len(items) != 0 {
		t.Fatalf("a window after them: %v, %v", items, err)
	}

	cs := moneystore.NewCards(db)
	for _, amount := range []int64{1500, 2500} {
		issue(t, cs, usdWallet(t, db, 10_000), uuid.NewString(), amount)
	}
	if sum, err := cs.CardBalances(ctx); err != nil || sum != 4000 {
		t.Fatalf("the cards' balances: %d, %v, want 4000", sum, err)
	}
}
