package moneystore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"payments/pkg/contention"
	"payments/pkg/debts"
	"payments/pkg/events"
	"payments/pkg/ids"
	"payments/pkg/page"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/storetest"
	"payments/pkg/wallets"
)

// TestRecoverDebts credits the USD wallet's payout balance step by step
// against three debts of 0.50, 0.70 and 1.20 USD: each credit pays the
// oldest first, a partial payment leaves the debt pending with its marker
// updated, a full one sets recovered_at and deletes the marker, and the
// wallet keeps what is left of the credit. A transaction of 10 items
// (DynamoDB Local's limit) has room for two payments beside a credit
// without a reference, one beside a credit with one.
func TestRecoverDebts(t *testing.T) {
	db := storetest.NewDB(t)
	db.MaxTransactItems = 10
	e := newDebtsEnv(t, db)
	base := time.Now().UTC().Truncate(time.Millisecond).Add(-time.Hour)
	// Made newest first: the oldest is paid first whatever the order of creation.
	d3 := e.debt(120, base.Add(3*time.Minute))
	d2 := e.debt(70, base.Add(2*time.Minute))
	d1 := e.debt(50, base.Add(time.Minute))
	order := []string{d1.ID, d2.ID, d3.ID}

	steps := []struct {
		name      string
		credit    int64
		ref       bool
		wantPay   int64    // the wallet's payout balance after
		remaining [3]int64 // of d1, d2, d3 after
	}{
		{"part of the oldest", 30, true, 0, [3]int64{20, 70, 120}},
		{"the rest of it and the next, no room for the third", 100, false, 10, [3]int64{0, 0, 120}},
		{"part of the third", 100, true, 10, [3]int64{0, 0, 20}},
		{"the rest of it, the rest of the credit to the wallet", 500, true, 490, [3]int64{0, 0, 0}},
		{"nothing owed", 25, true, 515, [3]int64{0, 0, 0}},
	}
	for _, st := range steps {
		after, entry, err := e.credit(e.ws, e.usd, st.credit, st.ref)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		got, err := e.ws.GetWallet(context.Background(), e.company, e.usd.ID)
		if err != nil || got != after || got.PayoutBalance != st.wantPay || got.PayoutAvailable != st.wantPay {
			t.Fatalf("%s: wallet %+v, %v; ApplyChange said %+v; want payout %d", st.name, got, err, after, st.wantPay)
		}
		if *entry.BalanceAfter-*entry.BalanceBefore != st.credit {
			t.Errorf("%s: the credit's entry goes from %d to %d", st.name, *entry.BalanceBefore, *entry.BalanceAfter)
		}
		stored := e.stored()
		for i, id := range order {
			d, want := stored[id], st.remaining[i]
			mark, pending := e.marker(id)
			switch {
			case d.Remaining != want:
				t.Errorf("%s: debt %d: remaining %d, want %d", st.name, i+1, d.Remaining, want)
			case want == 0 && (d.Status != debts.Recovered || d.RecoveredAt == nil || pending):
				t.Errorf("%s: debt %d paid: %+v, marker %v", st.name, i+1, d, pending)
			case want > 0 && (d.Status != debts.Pending || d.RecoveredAt != nil || !pending || mark != want):
				t.Errorf("%s: debt %d pending: %+v, marker %v with %d", st.name, i+1, d, pending, mark)
			}
		}
		e.verify()
	}

	fees := e.fees()
	for _, d := range []debts.Debt{d1, d2, d3} {
		var sum int64
		for _, f := range fees[d.ID] {
			sum -= f.Delta
			if f.Currency != "USD" || f.Balance != wallets.Payout || f.WalletID != e.usd.ID || *f.BalanceAfter-*f.BalanceBefore != f.Delta {
				t.Errorf("FEE entry %+v", f)
			}
		}
		if sum != d.Amount {
			t.Errorf("FEE entries of debt %s sum to %d, want %d", d.ID, sum, d.Amount)
		}
	}
	recovered, paid := 0, map[string]bool{}
	for _, r := range e.recoveries() {
		if r.Status == string(debts.Recovered) {
			if paid[r.DebtID] || r.RemainingAmount != "0" {
				t.Errorf("debt.recovered %+v", r)
			}
			paid[r.DebtID] = true
		}
		if r.WalletID != e.usd.ID || r.Currency != "USD" || r.LedgerTransactionID == "" {
			t.Errorf("debt.recovered %+v", r)
		}
		recovered++
	}
	if len(paid) != 3 || recovered != 5 {
		t.Errorf("%d debt.recovered events, %d with status RECOVERED; want 5 and 3", recovered, len(paid))
	}
}

// TestOnlyUSDPayoutCreditsRecover credits an XAF wallet and the USD
// wallet's payin balance: neither pays a debt.
func TestOnlyUSDPayoutCreditsRecover(t *testing.T) {
	e := newDebtsEnv(t, storetest.NewDB(t))
	d := e.debt(50, time.Now().UTC().Add(-time.Minute))
	if _, _, err := e.credit(e.ws, e.xaf, 1000, true); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	payin := fund(e.usd, 1000, now)
	if _, _, err := e.ws.ApplyChange(context.Background(), wallets.Change{
		CompanyID: e.company, WalletID: e.usd.ID, Adjust: wallets.Adjustment{Payin: 1000}, Entry: payin, Now: now,
	}); err != nil {
		t.Fatal(err)
	}
	if got := e.stored()[d.ID]; got.Remaining != 50 || got.Status != debts.Pending {
		t.Fatalf("debt %+v", got)
	}
	if _, pending := e.marker(d.ID); !pending || len(e.recoveries()) != 0 {
		t.Fatalf("marker %v, events %v", pending, e.recoveries())
	}
	e.verify()
}

// TestCreditWithoutDebts costs one Query of the pending markers, limited
// and consistent, and no item more in the transaction than before debts:
// the wallet, the entry and the reference.
func TestCreditWithoutDebts(t *testing.T) {
	db := storetest.NewDB(t)
	e := newDebtsEnv(t, db)
	e.debt(10, time.Now().UTC().Add(-time.Minute))
	if _, _, err := e.credit(e.ws, e.usd, 10, true); err != nil { // pays it
		t.Fatal(err)
	}
	var c calls
	if _, _, err := e.credit(moneystore.NewWallets(c.record(db)), e.usd, 100, true); err != nil {
		t.Fatal(err)
	}
	var queries, items int
	for _, op := range c.ops {
		switch in := op.(type) {
		case *dynamodb.QueryInput:
			queries++
			if !aws.ToBool(in.ConsistentRead) || aws.ToInt32(in.Limit) == 0 || aws.ToInt32(in.Limit) > 25 {
				t.Errorf("query of the pending debts: consistent %v, limit %d", aws.ToBool(in.ConsistentRead), aws.ToInt32(in.Limit))
			}
		case *dynamodb.TransactWriteItemsInput:
			items += len(in.TransactItems)
		}
	}
	if queries != 1 || items != 3 {
		t.Errorf("%d queries and %d items written, want 1 and 3", queries, items)
	}
	e.verify()
}

// TestConcurrentCreditsRecoverOnce credits the USD wallet 20 times at once
// against three pending debts: each debt is recovered exactly once, and the
// payout balance ends at the credits less the debts.
func TestConcurrentCreditsRecoverOnce(t *testing.T) {
	db := storetest.NewDB(t)
	db.Retry = contention.Policy{Attempts: 20, Base: time.Millisecond, Max: 20 * time.Millisecond}
	e := newDebtsEnv(t, db)
	base := time.Now().UTC().Add(-time.Hour)
	ds := []debts.Debt{e.debt(50, base), e.debt(70, base.Add(time.Second)), e.debt(120, base.Add(2*time.Second))}

	const n, amount = 20, 100
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := e.credit(e.ws, e.usd, amount, true)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("credit: %v", err)
		}
	}

	w, err := e.ws.GetWallet(context.Background(), e.company, e.usd.ID)
	if want := int64(n*amount - 240); err != nil || w.PayoutBalance != want || w.PayoutAvailable != want {
		t.Fatalf("wallet %+v, %v; want payout %d", w, err, want)
	}
	stored, fees := e.stored(), e.fees()
	for _, d := range ds {
		got := stored[d.ID]
		var sum int64
		for _, f := range fees[d.ID] {
			sum -= f.Delta
		}
		if _, pending := e.marker(d.ID); got.Remaining != 0 || got.Status != debts.Recovered || pending || sum != d.Amount {
			t.Errorf("debt %+v: marker %v, FEE entries sum to %d", got, pending, sum)
		}
	}
	paid := map[string]int{}
	for _, r := range e.recoveries() {
		if r.Status == string(debts.Recovered) {
			paid[r.DebtID]++
		}
	}
	for _, d := range ds {
		if paid[d.ID] != 1 {
			t.Errorf("debt %s: %d debt.recovered events with status RECOVERED, want 1", d.ID, paid[d.ID])
		}
	}
	e.verify()
}

// TestListDebts reads the company's debts a page at a time, newest first,
// with and without a status filter; another company's debts are not in
// its list.
func TestListDebts(t *testing.T) {
	db := storetest.NewDB(t)
	e := newDebtsEnv(t, db)
	other := newDebtsEnv(t, db)
	base := time.Now().UTC().Add(-time.Hour)
	var made []debts.Debt
	for i := range 5 {
		made = append(made, e.debt(int64(10*(i+1)), base.Add(time.Duration(i)*time.Second)))
	}
	other.debt(1000, base)
	if _, _, err := e.credit(e.ws, e.usd, 30, false); err != nil { // pays the two oldest
		t.Fatal(err)
	}
	s := moneystore.NewDebts(db)
	tests := []struct {
		name   string
		status debts.Status
		want   []debts.Debt // newest first
	}{
		{"all", "", []debts.Debt{made[4], made[3], made[2], made[1], made[0]}},
		{"pending", debts.Pending, []debts.Debt{made[4], made[3], made[2]}},
		{"recovered", debts.Recovered, []debts.Debt{made[1], made[0]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			req := page.Request{Page: 1, Limit: 2}
			for {
				page, err := s.List(context.Background(), e.company, tt.status, req)
				if err != nil {
					t.Fatal(err)
				}
				if page.Total != len(tt.want) {
					t.Errorf("total %d, want %d", page.Total, len(tt.want))
				}
				for _, d := range page.Items {
					got = append(got, d.ID)
				}
				if page.Next == "" {
					break
				}
				req = req.Following(page.Next, page.Total)
			}
			if fmt.Sprint(got) != fmt.Sprint(idsOf(tt.want)) {
				t.Errorf("listed %v, want %v", got, idsOf(tt.want))
			}
		})
	}
	if page, err := s.List(context.Background(), other.company, "", page.Request{Page: 1, Limit: 10}); err != nil || page.Total != 1 || len(page.Items) != 1 {
		t.Errorf("the other company's list: %+v, %v", page, err)
	}
}

// TestFundingSettlementRecovers settles a bank funding of the USD wallet's
// payout balance: as every credit to it, it pays the pending debt in the
// same transaction, with the FEE entry's balances following the funding's
// own, and the ledger holds.
func TestFundingSettlementRecovers(t *testing.T) {
	ctx := context.Background()
	e := newDebtsEnv(t, storetest.NewDB(t))
	now := time.Now().UTC().Truncate(time.Millisecond)
	d := e.debt(70, now.Add(-time.Minute))
	f := wallets.Transaction{
		ID: ids.NewV7(now), CompanyID: e.company, WalletID: e.usd.ID,
		Amount: 500, AmountWithFee: 500, NetAmount: 500, Currency: "USD",
		Status: wallets.StatusPending, Type: wallets.TypeFund, Reference: "bank-1", Balance: wallets.Payout, CreatedAt: now,
	}
	if err := e.ws.CreateFunding(ctx, f); err != nil {
		t.Fatal(err)
	}
	f.Status, f.Delta, f.CompletedAt = wallets.StatusSuccess, 500, &now
	ev, err := events.Build(e.company, events.WalletFundCompletedData{WalletFund: events.WalletFund{TransactionID: f.ID}}, now)
	if err != nil {
		t.Fatal(err)
	}
	written, err := e.ws.SettleFunding(ctx, f, ev)
	if err != nil {
		t.Fatal(err)
	}
	if *written.BalanceBefore != 0 || *written.BalanceAfter != 500 {
		t.Fatalf("funding entry balances %d → %d, want 0 → 500", *written.BalanceBefore, *written.BalanceAfter)
	}
	w, err := e.ws.GetWallet(ctx, e.company, e.usd.ID)
	if err != nil || w.PayoutBalance != 430 || w.PayoutAvailable != 430 {
		t.Fatalf("wallet %+v, %v; want payout 430", w, err)
	}
	if got := e.stored()[d.ID]; got.Remaining != 0 || got.Status != debts.Recovered {
		t.Fatalf("debt %+v", got)
	}
	fees := e.fees()[d.ID]
	if len(fees) != 1 || *fees[0].BalanceBefore != 500 || *fees[0].BalanceAfter != 430 || len(e.recoveries()) != 1 {
		t.Fatalf("FEE entries %+v, %d debt.recovered", fees, len(e.recoveries()))
	}
	if _, err := e.ws.SettleFunding(ctx, f, ev); !errors.Is(err, wallets.ErrFundingFinal) {
		t.Fatalf("second settlement = %v, want wallets.ErrFundingFinal", err)
	}
	e.verify()
}
